//go:build linux && (amd64 || arm64)

package initproc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"

	"golang.org/x/sys/unix"
)

// Attr describes the init process Start creates.
type Attr struct {
	// Cloneflags are the namespaces to create (CLONE_NEW*).
	Cloneflags uintptr
	// Unshare are namespaces the child creates itself (unshare(2)),
	// first thing, on its own core while the caller goes on (a network
	// namespace alone takes about half a millisecond to set up); it
	// then writes one byte on ReportFD, which the caller reads with
	// ReadUnshared before it sends the program. Only those clone(2) may
	// create in the child's user namespace: not CLONE_NEWUSER nor
	// CLONE_NEWPID, whose process would not be the child.
	Unshare uintptr
	// Files are the supervisor's descriptors that become the child's 0,
	// 1, 2, 3 and on, in order (see stageconfig's descriptor numbers);
	// from 3 on they are close-on-exec; -1 leaves its slot closed. Every
	// other descriptor is closed in the child.
	Files []int
	// UIDMap and GIDMap are written to the child's uid_map and gid_map
	// when Cloneflags has CLONE_NEWUSER; SetgroupsAllow writes "allow"
	// (else "deny") to its setgroups first.
	UIDMap, GIDMap string
	SetgroupsAllow bool
	// ReportFD is the child's descriptor (after placement) on which a
	// failure is reported before its program reports.
	ReportFD int
	// Name is the child's name (comm, what ps shows; 15 bytes at most):
	// see the package documentation.
	Name string
}

// ErrTooManyFiles is Start's error for more descriptors than it places.
var ErrTooManyFiles = errors.New("init process: too many descriptors")

// Start clones the init process into the namespaces of at.Cloneflags and
// returns its pid. The child places its descriptors, drops the memory the
// fork copied (see childUnmap) and waits for its program on descriptor 3;
// the caller sends it (see Builder) once it has written whatever else the
// child needs. The clone's errno is wrapped in the error, so that the
// caller can tell a missing user namespace (EPERM, ENOSPC, ...) apart.
//
// The child dies with the thread that called Start (PR_SET_PDEATHSIG), as
// a child of os/exec's would.
func Start(at *Attr) (int, error) {
	if len(at.Files) > maxFiles {
		return 0, ErrTooManyFiles
	}
	if at.Unshare&(unix.CLONE_NEWUSER|unix.CLONE_NEWPID) != 0 || at.Unshare&^namespaceFlags != 0 {
		return 0, fmt.Errorf("init process: cannot unshare %#x", at.Unshare)
	}
	mem, err := unix.Mmap(-1, 0, int(unsafe.Sizeof(arena{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return 0, fmt.Errorf("init process: arena: %w", err)
	}
	// The parent's copy is not needed once the child has its own. It goes
	// in the background: the munmap flushes the TLBs of every CPU running
	// one of this process's threads (an IPI each, tens of microseconds in
	// a VM), and the child waits for its program meanwhile.
	defer func() { go unix.Munmap(mem) }()
	// One read of the mappings serves the facts (the first time) and the
	// wipe window; nil when it fails: no facts, nothing wiped.
	maps, err := proc.ReadFile("/proc/self/maps", maxMaps)
	if err != nil {
		maps = nil
	}
	f := facts.get(maps)
	a := (*arena)(unsafe.Pointer(&mem[0]))
	lo := uintptr(unsafe.Pointer(&a.stack[0]))
	// The compiler's stack checks compare the stack pointer with the
	// third word; the child's stack is never near its end.
	a.g = [4]uintptr{lo, lo + stackSize, lo + 4096, lo + 4096}
	for i, fd := range at.Files {
		a.pre.files[i] = int32(fd)
	}
	a.pre.nfiles = int32(len(at.Files))
	a.pre.report = int32(at.ReportFD)
	a.pre.unshare = at.Unshare
	copy(a.pre.name[:15], at.Name)
	a.pre.stack = f.stack
	base := uintptr(unsafe.Pointer(&mem[0]))
	if f.full {
		pg := uintptr(os.Getpagesize())
		keep := append(f.keep[:len(f.keep):len(f.keep)], [2]uintptr{base, (base + uintptr(len(mem)) + pg - 1) &^ (pg - 1)})
		sort.Slice(keep, func(i, j int) bool { return keep[i][0] < keep[j][0] })
		if len(keep) <= maxKeep {
			copy(a.pre.keep[:], keep)
			a.pre.nkeep = int32(len(keep))
			a.pre.full = 1
		}
	}
	pid, errno := forkChild(a, at.Cloneflags, f.entry, base, base+uintptr(len(mem)), maps)
	if errno != 0 {
		return 0, fmt.Errorf("clone: %w", errno)
	}
	if at.Cloneflags&unix.CLONE_NEWUSER != 0 {
		if err := writeIDMaps(int(pid), at); err != nil {
			unix.Kill(int(pid), unix.SIGKILL)
			var ws unix.WaitStatus
			unix.Wait4(int(pid), &ws, 0, nil)
			return 0, err
		}
	}
	return int(pid), nil
}

// writeIDMaps writes the child's user namespace maps.
func writeIDMaps(pid int, at *Attr) error {
	if !ownProc() {
		return ErrForeignProc
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	setgroups := "deny"
	if at.SetgroupsAllow {
		setgroups = "allow"
	}
	for _, w := range []struct{ file, content string }{
		{"uid_map", at.UIDMap}, {"setgroups", setgroups}, {"gid_map", at.GIDMap},
	} {
		if w.content == "" {
			continue
		}
		fd, err := unix.Open(dir+w.file, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err == unix.EROFS {
			return fmt.Errorf("open %s: %w: /proc is mounted read-only here, and the maps of the run's user namespace are written there", w.file, err)
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", w.file, err)
		}
		_, err = unix.Write(fd, []byte(w.content))
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("write %s: %w", w.file, err)
		}
	}
	return nil
}

// ErrForeignProc is Start's error when /proc shows another PID namespace
// than the caller's, where the child's ID maps cannot be found.
var ErrForeignProc = errors.New("/proc belongs to another PID namespace than this process " +
	"(a PID namespace made without mounting its own proc, as unshare -p without --mount-proc): " +
	"the sandbox reaches its processes through /proc; mount a proc for this PID namespace")

// ownProc reports whether /proc shows this process's PID namespace: its
// "self" is this process's pid. Else /proc/<pid> would be another
// process, whose maps are not the child's to write. One readlink, about a
// microsecond of a start's milliseconds.
func ownProc() bool {
	self, err := os.Readlink("/proc/self")
	return err != nil || self == strconv.Itoa(os.Getpid())
}

// procFacts is what Start needs to know of this process, which does not
// change while it runs.
type procFacts struct {
	entry uintptr // childMain's code
	// keep lists the executable's mappings that are not writable (its
	// code and constants) and the kernel's ([vdso], [vvar]), and full
	// says that they were found.
	keep [][2]uintptr
	full bool
	// stack is the process's initial stack mapping.
	stack [2]uintptr
}

// factsOnce holds the process's facts, found once: a lazily computed
// constant of the process, the same for every Start.
type factsOnce struct {
	once sync.Once
	pf   procFacts
}

// facts is the process's (see factsOnce).
var facts factsOnce

// get returns the facts, found in maps (a read of /proc/self/maps) the
// first time it is given one; without one, only the entry point.
func (o *factsOnce) get(maps []byte) procFacts {
	if maps == nil {
		return procFacts{entry: reflect.ValueOf(childMain).Pointer()}
	}
	o.once.Do(func() { o.pf = readFacts(maps) })
	return o.pf
}

// readFacts finds in maps, a read of /proc/self/maps, the executable's
// read-only mappings (by its device and inode, so a replaced or deleted
// file still matches), the kernel's and the [stack] mapping.
func readFacts(maps []byte) procFacts {
	pf := procFacts{entry: reflect.ValueOf(childMain).Pointer()}
	var st unix.Stat_t
	if unix.Stat("/proc/self/exe", &st) != nil {
		return pf
	}
	for line := range strings.Lines(string(maps)) {
		// start-end perms offset major:minor inode path
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		lo, hi, ok := parseRange(fields[0])
		if !ok {
			continue
		}
		if len(fields) >= 6 && fields[5] == "[stack]" {
			pf.stack = [2]uintptr{lo, hi}
			continue
		}
		if len(fields) >= 6 && strings.HasPrefix(fields[5], "[") && fields[5] != "[heap]" && fields[5] != "[vsyscall]" {
			// The kernel's own ([vdso], [vvar]): sealed on some
			// kernels (munmap fails), and holding nothing of ours.
			// ([vsyscall] lies above the range munmap takes.)
			pf.keep = append(pf.keep, [2]uintptr{lo, hi})
			continue
		}
		ino, err := strconv.ParseUint(fields[4], 10, 64)
		if err != nil || ino != st.Ino || !sameDev(fields[3], uint64(st.Dev)) {
			continue
		}
		if len(fields[1]) > 1 && fields[1][1] != 'w' {
			pf.keep = append(pf.keep, [2]uintptr{lo, hi})
		}
	}
	pf.full = len(pf.keep) > 0 && len(pf.keep) < maxKeep
	sort.Slice(pf.keep, func(i, j int) bool { return pf.keep[i][0] < pf.keep[j][0] })
	return pf
}

// parseRange parses "start-end" in hex.
func parseRange(s string) (lo, hi uintptr, ok bool) {
	a, b, found := strings.Cut(s, "-")
	x, err1 := strconv.ParseUint(a, 16, 64)
	y, err2 := strconv.ParseUint(b, 16, 64)
	return uintptr(x), uintptr(y), found && err1 == nil && err2 == nil && x < y
}

// sameDev reports whether "major:minor" (hex) is dev.
func sameDev(s string, dev uint64) bool {
	a, b, found := strings.Cut(s, ":")
	maj, err1 := strconv.ParseUint(a, 16, 32)
	min, err2 := strconv.ParseUint(b, 16, 32)
	return found && err1 == nil && err2 == nil && unix.Major(dev) == uint32(maj) && unix.Minor(dev) == uint32(min)
}

//go:linkname runtimeBeforeFork syscall.runtime_BeforeFork
func runtimeBeforeFork()

//go:linkname runtimeAfterFork syscall.runtime_AfterFork
func runtimeAfterFork()

// cloneChild makes the clone(2) system call with stack as the child's
// stack; the child points the g register at gp and calls fn (a Go
// function's code, taking one pointer) with arg, and never returns. The
// parent gets the pid or the errno (see enter_*.s).
func cloneChild(flags, stack, gp, fn, arg uintptr) (pid, errno uintptr)

// forkChild clones the process as os/exec's fork does (the runtime is
// told, so that the signals are blocked and nothing else runs on this
// thread meanwhile); the child enters childMain on the arena, which
// spans arenaLo to arenaHi. The supervisor's anonymous memory is not
// copied (see wipeWindow).
//
//go:norace
//go:nocheckptr
//go:noinline
func forkChild(a *arena, flags, entry, arenaLo, arenaHi uintptr, maps []byte) (uintptr, syscall.Errno) {
	stack := uintptr(unsafe.Pointer(&a.stack[stackSize-64])) &^ 15
	gp := uintptr(unsafe.Pointer(&a.g))
	arg := uintptr(unsafe.Pointer(a))
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	wipe.enter(arenaLo, arenaHi, maps)
	runtimeBeforeFork()
	pid, errno := cloneChild(flags|uintptr(unix.SIGCHLD), stack, gp, entry, arg)
	runtimeAfterFork()
	wipe.leave(arenaLo)
	return pid, syscall.Errno(errno)
}

// RunHere runs p on the calling thread of this process, as the init
// process would run it, and returns its report: for whitebox tests of a
// layer alone (a block of the program without a report, an exec or
// reaping), which act on the calling process and its namespaces.
func RunHere(p *Program) (Report, error) {
	if len(p.Bytes) > MaxProgram {
		return Report{}, fmt.Errorf("init program: %d bytes", len(p.Bytes))
	}
	mem, err := unix.Mmap(-1, 0, int(unsafe.Sizeof(arena{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return Report{}, err
	}
	defer unix.Munmap(mem)
	a := (*arena)(unsafe.Pointer(&mem[0]))
	a.pre.report = -1
	n := copy(a.prog[:], p.Bytes)
	if verify(unsafe.Pointer(&a.prog[0]), n) != 0 {
		return Report{}, errors.New("init program: does not verify")
	}
	a.runProgram(n)
	r := a.vm.report
	r.Magic, r.Applied, r.Missing = reportMagic, a.vm.applied, a.vm.missing
	return r, nil
}

// Verify checks a program as the init process does before it runs it and
// returns 0, or the number of the first check that failed.
func Verify(p []byte) int {
	buf := make([]uint64, (len(p)+7)/8+1)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	copy(b, p)
	return verify(unsafe.Pointer(&buf[0]), len(p))
}

// namespaceFlags are the CLONE_NEW* flags.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// ReadUnshared reads what the child pid, started with Attr.Unshare, wrote
// on its report descriptor (report, the caller's end) once it tried: nil
// when it has the namespaces, else unshare(2)'s error (the child has then
// exited), or why nothing came. The caller holds the pipe's other end
// too, for the child's next start, so the child's end alone would never
// show: the child's exit is watched as well (a pidfd), which ends the
// wait with an error, as does a child that takes longer than wait.
func ReadUnshared(report *os.File, pid int, wait time.Duration) error {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return fmt.Errorf("init process: unshare: watching it: %w", err)
	}
	defer unix.Close(pidfd)
	fds := []unix.PollFd{{Fd: int32(report.Fd()), Events: unix.POLLIN}, {Fd: int32(pidfd), Events: unix.POLLIN}}
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return errors.New("init process: unshare: no word from it in time")
		}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("init process: unshare: %w", err)
		}
		if n > 0 && fds[0].Revents != 0 {
			break // its word came (an exit after it leaves it readable too)
		}
		if n > 0 && fds[1].Revents != 0 {
			return errors.New("init process: ended before it made its namespaces")
		}
	}
	var b [1]byte
	if _, err := io.ReadFull(report, b[:]); err != nil {
		return fmt.Errorf("init process: unshare: %w", err)
	}
	if b[0] != 0 {
		return fmt.Errorf("unshare: %w", syscall.Errno(b[0]))
	}
	return nil
}
