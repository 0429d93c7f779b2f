//go:build linux && (amd64 || arm64)

package initproc

import (
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// landlockRule is opLandlockRule; it returns the errno of a failure, or 0.
//
//go:norace
//go:nocheckptr
func (a *arena) landlockRule(op *Op, data unsafe.Pointer) uint32 {
	path := uintptr(unsafe.Add(data, op.Args[1]))
	var fd uintptr
	var e uint32
	if op.Flags&flagResolveRoot != 0 {
		how := (*unix.OpenHow)(unsafe.Pointer(&a.scratch[0]))
		*how = unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
		// EAGAIN: a ".." (of a symlink such as /etc/os-release ->
		// ../usr/lib/os-release) met a rename or mount anywhere on
		// the host meanwhile; openat2(2) says to try again.
		for try := 0; ; try++ {
			fd, e = sys(unix.SYS_OPENAT2, a.arg(op, 0, data), path, uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
			if e != uint32(unix.EAGAIN) || try == maxAgain {
				break
			}
		}
	} else {
		fd, e = sys(unix.SYS_OPENAT, atFDCWD, path, unix.O_PATH|unix.O_CLOEXEC, 0, 0, 0)
	}
	if e == uint32(unix.ENOENT) && op.Flags&flagOptional != 0 {
		return 0
	}
	if e != 0 {
		return e
	}
	st := (*unix.Stat_t)(unsafe.Pointer(&a.scratch[64]))
	access := op.Args[3]
	if _, e = sys(sysFstat, fd, uintptr(unsafe.Pointer(st)), 0, 0, 0, 0); e == 0 && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access = op.Args[4]
	}
	if e == 0 && access != 0 {
		attr := (*unix.LandlockPathBeneathAttr)(unsafe.Pointer(&a.scratch[0]))
		*attr = unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
		_, e = sys(unix.SYS_LANDLOCK_ADD_RULE, a.arg(op, 2, data), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(attr)), 0, 0, 0)
	}
	sys(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
	return e
}

// maxAgain bounds the retries of a call that failed with EAGAIN.
const maxAgain = 64

// atFDCWD is AT_FDCWD as a system call argument.
const atFDCWD = ^uintptr(99) // -100

// remount is opRemount; it returns the errno of a failure, or 0.
//
//go:norace
//go:nocheckptr
func (a *arena) remount(op *Op, data unsafe.Pointer) uint32 {
	path := uintptr(unsafe.Add(data, op.Args[0]))
	st := (*unix.Statfs_t)(unsafe.Pointer(&a.scratch[0]))
	if _, e := sys(unix.SYS_STATFS, path, uintptr(unsafe.Pointer(st)), 0, 0, 0, 0); e != 0 {
		return e
	}
	flags := uintptr(unix.MS_BIND|unix.MS_REMOUNT) | uintptr(op.Args[1])
	f := uintptr(st.Flags)
	for _, m := range [...][2]uintptr{
		{unix.ST_RDONLY, unix.MS_RDONLY},
		{unix.ST_NOSUID, unix.MS_NOSUID},
		{unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME},
		{unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if f&m[0] != 0 {
			flags |= m[1]
		}
	}
	var empty [1]byte
	_, e := sys(unix.SYS_MOUNT, uintptr(unsafe.Pointer(&empty[0])), path, uintptr(unsafe.Pointer(&empty[0])), flags, 0, 0)
	return e
}

// childReceive is a pooled init process's first step once a run takes it:
// the run's descriptors come with the first byte on the config socket
// (see native's Pooled.handOver), and are moved where a process started for the run
// would have them: stdin at 0 when the header says so, the rest from
// stageconfig.FirstTreeFD on, close-on-exec. Each is first moved above
// those slots, so that placing one cannot overwrite another; a slot in use
// fails.
//
//go:norace
//go:nocheckptr
func childReceive(a *arena) bool {
	var head [1]byte
	iov := [2]uint64{uint64(uintptr(unsafe.Pointer(&head[0]))), 1}
	oob := a.scratch[:unix.CmsgSpace(stageconfig.MaxPassedFDs*4)]
	var msg unix.Msghdr
	msg.Iov = (*unix.Iovec)(unsafe.Pointer(&iov))
	msg.Iovlen = 1
	msg.Control = &oob[0]
	msg.Controllen = uint64(len(oob))
	n, e := sys(unix.SYS_RECVMSG, stageconfig.ConfigFD, uintptr(unsafe.Pointer(&msg)), unix.MSG_CMSG_CLOEXEC, 0, 0, 0)
	if e != 0 || n != 1 || msg.Flags&unix.MSG_CTRUNC != 0 || head[0] != stageconfig.PassNoStdin && head[0] != stageconfig.PassWithStdin {
		return false
	}
	var fds [stageconfig.MaxPassedFDs]int32
	nfds := 0
	hsize := uint64(unix.CmsgLen(0))
	for off := uint64(0); off+hsize <= msg.Controllen; {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[off]))
		if h.Len < hsize || off+h.Len > msg.Controllen {
			return false
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_RIGHTS {
			for d := off + hsize; d+4 <= off+h.Len && nfds < len(fds); d += 4 {
				fds[nfds] = *(*int32)(unsafe.Pointer(&oob[d]))
				nfds++
			}
		}
		off += (h.Len + 7) &^ 7
	}
	if head[0] == stageconfig.PassWithStdin && nfds == 0 {
		return false
	}
	above := uintptr(stageconfig.FirstTreeFD + nfds)
	for i := 0; i < nfds; i++ {
		hi, e := sys(unix.SYS_FCNTL, uintptr(fds[i]), unix.F_DUPFD_CLOEXEC, above, 0, 0, 0)
		if e != 0 {
			return false
		}
		sys(unix.SYS_CLOSE, uintptr(fds[i]), 0, 0, 0, 0, 0)
		fds[i] = int32(hi)
	}
	first := 0
	if head[0] == stageconfig.PassWithStdin {
		if _, e := sys(unix.SYS_DUP3, uintptr(fds[0]), 0, 0, 0, 0, 0); e != 0 {
			return false
		}
		sys(unix.SYS_CLOSE, uintptr(fds[0]), 0, 0, 0, 0, 0)
		first = 1
	}
	for i := first; i < nfds; i++ {
		slot := uintptr(stageconfig.FirstTreeFD + i - first)
		if _, e := sys(unix.SYS_FCNTL, slot, unix.F_GETFD, 0, 0, 0, 0); e != uint32(unix.EBADF) {
			return false
		}
		if _, e := sys(unix.SYS_DUP3, uintptr(fds[i]), slot, unix.O_CLOEXEC, 0, 0, 0); e != 0 {
			return false
		}
		sys(unix.SYS_CLOSE, uintptr(fds[i]), 0, 0, 0, 0, 0)
	}
	return true
}
