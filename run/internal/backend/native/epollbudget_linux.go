//go:build linux && (amd64 || arm64)

package native

import (
	"fmt"
	"os"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"
	"golang.org/x/sys/unix"
)

// epollRun is the server of a run's epoll budget, once the init process
// handed its seccomp listener over.
type epollRun struct {
	server *seccomp.EpollServer
	budget int
}

// start receives the listener the init process sent on sup (before its
// layer report, so it is there to read) and serves it. A run whose
// budget is set and whose seccomp filter is in force must have sent one:
// its absence refuses the run, as does a failure to serve it (the
// script would otherwise wait on its first watch, or never get one).
func (e *epollRun) start(sup *os.File, budget int) error {
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(sup.Fd()), buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return fmt.Errorf("%w: the seccomp listener that counts the run's epoll watches was not handed over: %v", backend.ErrStart, err)
	}
	fd, err := oneRight(oob[:oobn])
	if err == nil && (n != 1 || buf[0] != 'N') {
		unix.Close(fd)
		err = fmt.Errorf("a message of %d bytes (%q) instead", n, buf[:n])
	}
	if err != nil {
		return fmt.Errorf("%w: the seccomp listener that counts the run's epoll watches was not handed over: %v", backend.ErrStart, err)
	}
	s, err := seccomp.ServeEpoll(fd, budget)
	if err != nil {
		return fmt.Errorf("%w: serving the seccomp listener: %v", backend.ErrStart, err)
	}
	e.server, e.budget = s, budget
	return nil
}

// oneRight returns the one descriptor a control message carries.
func oneRight(oob []byte) (int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("not one control message (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("not one descriptor (%v)", err)
	}
	return fds[0], nil
}

// stop ends the server, if any: what is left of the run then gets ENOSYS
// for a new watch.
func (e *epollRun) stop() {
	if e.server != nil {
		e.server.Stop()
	}
}

// served is the budget a server kept, 0 without one.
func (e *epollRun) served() int {
	if e.server == nil {
		return 0
	}
	return e.budget
}
