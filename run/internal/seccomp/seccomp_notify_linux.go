//go:build linux && (amd64 || arm64)

package seccomp

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// notif is struct seccomp_notif (linux/seccomp.h), which the kernel
// fills at SECCOMP_IOCTL_NOTIF_RECV: 80 bytes, the size in the ioctl's
// number.
type notif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

// notifResp is struct seccomp_notif_resp, sent at
// SECCOMP_IOCTL_NOTIF_SEND: 24 bytes.
type notifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// EpollServer answers a run's epoll_ctl(EPOLL_CTL_ADD) calls, which its
// seccomp filter (Policy.NotifyEpollAdd) sends to the listener: the first
// budget of them go ahead (SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel
// then runs the call as it would have), the rest fail with ENOSPC, what
// the kernel itself answers at fs.epoll.max_user_watches.
//
// The count only grows. A watch goes away on EPOLL_CTL_DEL and, unseen,
// when the last reference to its file or epoll instance is closed, which
// can be in another process, or never while a descriptor waits in a unix
// socket's queue (SCM_RIGHTS): no recount from /proc would be sound. So the
// count of additions is an upper bound on the watches the run holds at
// any moment, whatever it does, and an event loop that adds and removes a
// descriptor for every wait spends its budget as it goes.
//
// The server stops when every process under the filter is gone (the
// listener hangs up), or at Stop. Then it closes the listener, and the
// kernel answers EPOLL_CTL_ADD with ENOSYS for as long as any process of
// the run is left: never a watch that was not counted.
type EpollServer struct {
	listener     int
	budget       int64
	added        atomic.Int64 // EPOLL_CTL_ADD calls seen, those refused included
	stopR, stopW *os.File
	done         chan struct{}
}

// ServeEpoll starts serving listener, a seccomp filter's listener the
// server then owns, with budget additions.
func ServeEpoll(listener int, budget int) (*EpollServer, error) {
	stopR, stopW, err := os.Pipe()
	if err != nil {
		unix.Close(listener)
		return nil, err
	}
	s := &EpollServer{listener: listener, budget: int64(budget), stopR: stopR, stopW: stopW, done: make(chan struct{})}
	go s.serve()
	return s, nil
}

// Stop ends the server and closes the listener, and returns the number
// of EPOLL_CTL_ADD calls it was asked about (those refused included).
func (s *EpollServer) Stop() int64 {
	s.stopW.Close()
	<-s.done
	return s.added.Load()
}

// Added returns the number of EPOLL_CTL_ADD calls answered so far.
func (s *EpollServer) Added() int64 { return s.added.Load() }

// serve answers notifications until the listener hangs up or Stop.
func (s *EpollServer) serve() {
	defer close(s.done)
	defer s.stopR.Close()
	defer unix.Close(s.listener)
	fds := []unix.PollFd{{Fd: int32(s.listener), Events: unix.POLLIN}, {Fd: int32(s.stopR.Fd()), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		switch {
		case fds[0].Revents&unix.POLLIN != 0:
			if !s.answer() {
				return
			}
		case fds[0].Revents != 0: // POLLHUP: no process is left under the filter
			return
		}
	}
}

// answer receives one notification and answers it; false when the
// listener fails (the server stops, and the kernel answers ENOSYS).
func (s *EpollServer) answer() bool {
	var n notif
	if err := s.ioctl(unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
		// ENOENT: the caller was killed between the poll and the
		// receive; EINTR: a signal of the supervisor's.
		return err == unix.ENOENT || err == unix.EINTR
	}
	resp := notifResp{id: n.id}
	switch {
	case n.nr != int32(unix.SYS_EPOLL_CTL) || n.arch != auditArch || int32(n.args[1]) != unix.EPOLL_CTL_ADD:
		// Not what the filter sends: refuse rather than run it.
		resp.error = -int32(unix.EPERM)
	case s.added.Add(1) <= s.budget:
		resp.flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	default:
		resp.error = -int32(unix.ENOSPC)
	}
	err := s.ioctl(unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
	// ENOENT: the caller is gone (killed while it waited).
	return err == nil || err == unix.ENOENT || err == unix.EINTR
}

// ioctl makes a listener ioctl with arg.
func (s *EpollServer) ioctl(req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(s.listener), uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

// NotifyContinues reports whether the running kernel has
// SECCOMP_USER_NOTIF_FLAG_CONTINUE (Linux 5.5), which EpollServer needs:
// without it a notified call can only be answered, not run. Read from the
// kernel's release (uname), since a listener to try it on would take a
// filter on the supervisor itself.
func NotifyContinues() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	return releaseAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 5)
}

// releaseAtLeast reports whether a kernel release ("6.1.0-18-amd64")
// is major.minor or later; false when it does not parse.
func releaseAtLeast(release string, major, minor int) bool {
	f := strings.SplitN(release, ".", 3)
	if len(f) < 2 {
		return false
	}
	digits := func(s string) string {
		if i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
			return s[:i]
		}
		return s
	}
	ma, err1 := strconv.Atoi(f[0])
	mi, err2 := strconv.Atoi(digits(f[1]))
	if errors.Join(err1, err2) != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}
