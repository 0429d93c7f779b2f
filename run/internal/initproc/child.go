//go:build linux && (amd64 || arm64)

package initproc

import (
	"syscall"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// This file and child_*.go run in the init process, which has no Go
// runtime: see the package documentation for the rules. Every function
// is go:norace and go:nocheckptr, since the race detector's and the
// pointer checker's hooks are runtime calls.

// sys makes a raw system call and returns its result and errno.
//
//go:norace
//go:nocheckptr
func sys(nr, a1, a2, a3, a4, a5, a6 uintptr) (uintptr, uint32) {
	r, _, e := syscall.RawSyscall6(nr, a1, a2, a3, a4, a5, a6)
	return r, uint32(e)
}

// exit ends the init process.
//
//go:norace
//go:nocheckptr
func exit(code int) {
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, uintptr(code), 0, 0)
	}
}

// childMain is the init process from its first instruction on the arena's
// stack (see enterChild): the preamble Start asked for, then the program
// from descriptor stageconfig.ConfigFD. It never returns.
//
//go:norace
//go:nocheckptr
func childMain(a *arena) {
	// The supervisor dies, so does the run. (Without a PID namespace a
	// supervisor already gone leaves the config pipe closed: the program
	// read below then ends the child.)
	sys(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0, 0)
	if !childPlaceFiles(a) {
		exit(stageconfig.ExitFailure)
	}
	// Its own session and process group: no controlling terminal.
	sys(unix.SYS_SETSID, 0, 0, 0, 0, 0, 0)
	sys(unix.SYS_PRCTL, unix.PR_SET_NAME, uintptr(unsafe.Pointer(&a.pre.name[0])), 0, 0, 0, 0)
	if a.pre.unshare != 0 {
		childUnshare(a)
	}
	childUnmap(a)
	n, ok := childReadProgram(a, stageconfig.ConfigFD)
	if !ok {
		exit(stageconfig.ExitFailure)
	}
	exit(a.runProgram(n))
}

// childUnshare creates the namespaces of pre.unshare (Attr.Unshare) and
// tells the supervisor on the report descriptor (see ReadUnshared): 0 once
// done, else the errno, and then the child ends: its program counts on
// them.
//
//go:norace
//go:nocheckptr
func childUnshare(a *arena) {
	_, e := sys(unix.SYS_UNSHARE, a.pre.unshare, 0, 0, 0, 0, 0)
	word := [1]byte{byte(e)}
	if e != 0 && word[0] == 0 {
		word[0] = byte(unix.EINVAL) // an errno past 255, never seen
	}
	for {
		_, we := sys(unix.SYS_WRITE, uintptr(a.pre.report), uintptr(unsafe.Pointer(&word[0])), 1, 0, 0, 0)
		if we != uint32(unix.EINTR) {
			break
		}
	}
	if e != 0 {
		exit(stageconfig.ExitFailure)
	}
}

// childPlaceFiles puts the supervisor's descriptors pre.files at 0, 1, 2,
// ..., close-on-exec from 3 on, and closes every other descriptor the
// fork copied, also a slot given -1 (none). Descriptors in the way are
// first moved above the slots, so that placing one never overwrites
// another.
//
//go:norace
//go:nocheckptr
func childPlaceFiles(a *arena) bool {
	n := uintptr(a.pre.nfiles)
	if n > maxFiles {
		return false
	}
	for i := uintptr(0); i < n; i++ {
		if a.pre.files[i] < 0 {
			continue
		}
		fd := uintptr(a.pre.files[i])
		if fd < n && fd != i {
			nfd, e := sys(unix.SYS_FCNTL, fd, unix.F_DUPFD_CLOEXEC, n, 0, 0, 0)
			if e != 0 {
				return false
			}
			a.pre.files[i] = int32(nfd)
		}
	}
	for i := uintptr(0); i < n; i++ {
		fd := uintptr(a.pre.files[i])
		var e uint32
		switch {
		case a.pre.files[i] < 0:
			// Nothing to place: whatever the fork left there goes (no
			// slot's descriptor is there, the loop above moved them).
			sys(unix.SYS_CLOSE, i, 0, 0, 0, 0, 0)
		case fd == i && i > 2:
			_, e = sys(unix.SYS_FCNTL, fd, unix.F_SETFD, unix.FD_CLOEXEC, 0, 0, 0)
		case fd == i:
			_, e = sys(unix.SYS_FCNTL, fd, unix.F_SETFD, 0, 0, 0, 0)
		case i > 2:
			_, e = sys(unix.SYS_DUP3, fd, i, unix.O_CLOEXEC, 0, 0, 0)
		default:
			_, e = sys(unix.SYS_DUP3, fd, i, 0, 0, 0, 0)
		}
		if e != 0 {
			return false
		}
	}
	if _, e := sys(unix.SYS_CLOSE_RANGE, n, uintptr(closeRangeAll), 0, 0, 0, 0); e == 0 {
		return true
	}
	return childCloseFrom(a, n)
}

// childCloseFrom closes every descriptor from lo on, listing them in
// /proc/self/fd, for kernels before 5.9 (no close_range(2)).
//
//go:norace
//go:nocheckptr
func childCloseFrom(a *arena, lo uintptr) bool {
	path := a.scratch[:]
	copyString(path, "/proc/self/fd\x00")
	dir, e := sys(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&path[0])), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return false
	}
	buf := a.scratch[64:]
	for {
		n, e := sys(unix.SYS_GETDENTS64, dir, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		if e != 0 {
			return false
		}
		if n == 0 {
			break
		}
		for off := uintptr(0); off+19 < n; {
			reclen := uintptr(buf[off+16]) | uintptr(buf[off+17])<<8
			if reclen == 0 {
				return false
			}
			fd, digits := uintptr(0), 0
			for i := off + 19; i < off+reclen && i < n && buf[i] != 0; i++ {
				c := buf[i]
				if c < '0' || c > '9' {
					digits = -1
					break
				}
				fd = fd*10 + uintptr(c-'0')
				digits++
			}
			if digits > 0 && fd >= lo && fd != dir {
				sys(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
			}
			off += reclen
		}
	}
	sys(unix.SYS_CLOSE, dir, 0, 0, 0, 0, 0)
	return true
}

// childUnmap drops the supervisor's memory that fork(2) copied. The
// process's first stack, which holds its argv and environment (readable
// as /proc/1/cmdline by anyone), always goes. With pre.full everything
// but pre.keep goes too (the supervisor's heap, its globals, its threads'
// stacks): then the init process holds nothing of the supervisor but the
// executable's code and constants, and the script's fork copies nothing.
// That needs no other rseq area to be registered on this thread (a C
// library's, in a program linked with cgo, would be written to by the
// kernel at the next preemption): registering the arena's own tells. Where
// another one is, the copy stays, unreadable to the run (the init process
// is not dumpable and its memory belongs to the supervisor's user
// namespace; see docs/security.md).
//
//go:norace
//go:nocheckptr
func childUnmap(a *arena) {
	if a.pre.stack[1] > a.pre.stack[0] {
		sys(unix.SYS_MUNMAP, a.pre.stack[0], a.pre.stack[1]-a.pre.stack[0], 0, 0, 0, 0)
	}
	if a.pre.full == 0 {
		return
	}
	rs := (uintptr(unsafe.Pointer(&a.rseq[0])) + 31) &^ 31
	if _, e := sys(unix.SYS_RSEQ, rs, 32, 0, rseqSignature, 0, 0); e != 0 && e != uint32(unix.ENOSYS) {
		return
	}
	lo := uintptr(0)
	for i := int32(0); i < a.pre.nkeep && i < maxKeep; i++ {
		k := a.pre.keep[i]
		if k[0] > lo {
			sys(unix.SYS_MUNMAP, lo, k[0]-lo, 0, 0, 0, 0)
		}
		if k[1] > lo {
			lo = k[1]
		}
	}
	// The top of the address space depends on the kernel's
	// configuration; munmap refuses a range past it (EINVAL).
	for _, top := range [...]uintptr{1<<57 - 4096, 1 << 56, 1 << 52, 1 << 48, 1<<47 - 4096, 1 << 47, 1 << 42, 1 << 39} {
		if top > lo {
			if _, e := sys(unix.SYS_MUNMAP, lo, top-lo, 0, 0, 0, 0); e == 0 {
				return
			}
		}
	}
}
