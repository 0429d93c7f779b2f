package run

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// child is the init stage's process, known by the pid its clone returned,
// and signalled and reaped here rather than through an *os.Process: the
// first os.FindProcess of a process checks whether pidfds work, with a
// vfork of a child of its own, about 0.12 ms of CPU on every call of the
// CLI, which on 2 cores the init stage building its sandbox needs.
//
// A signal never reaches another process that got the pid: it goes
// through a pidfd where the kernel has them (pidfd_open(2), Linux 5.3),
// and either way only while the child is not reaped, which Wait does
// under mu. A child that vanished without Wait (reaped elsewhere, as when
// the program ignores SIGCHLD) is taken as reaped: no signal goes to its
// pid after.
type child struct {
	pid   int
	pidfd int // -1 without one

	waitMu sync.Mutex // one Wait at a time

	mu       sync.Mutex // held while signalling, and while reaping
	done     bool       // reaped, or gone: no more signals
	hasState bool       // reaped by Wait: status and usage are its
	status   syscall.WaitStatus
	usage    syscall.Rusage
}

// newChild returns the child whose pid a clone returned.
func newChild(pid int) *child {
	c := &child{pid: pid, pidfd: -1}
	if fd, err := unix.PidfdOpen(pid, 0); err == nil { // close-on-exec
		c.pidfd = fd
	}
	return c
}

// Pid returns the process's pid.
func (c *child) Pid() int { return c.pid }

// Kill sends the process SIGKILL, unless it is already reaped
// (os.ErrProcessDone then).
func (c *child) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return os.ErrProcessDone
	}
	if c.pidfd >= 0 {
		err := unix.PidfdSendSignal(c.pidfd, unix.SIGKILL, nil, 0)
		if err != unix.ENOSYS && err != unix.EPERM {
			return err
		}
	}
	return unix.Kill(c.pid, unix.SIGKILL)
}

// Wait blocks until the process has exited, then reaps it and keeps its
// status and resource usage (see exitState). Waiting for a process
// already reaped returns os.ErrProcessDone.
func (c *child) Wait() error {
	c.waitMu.Lock()
	defer c.waitMu.Unlock()
	if c.reaped() {
		return os.ErrProcessDone
	}
	// Block until it can be reaped, without reaping it: a Kill meanwhile
	// still finds the pid this process's.
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, c.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			c.mu.Lock()
			defer c.mu.Unlock()
			if err == unix.ECHILD {
				c.release()
			}
			return os.NewSyscallError("waitid", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		_, err := syscall.Wait4(c.pid, &c.status, 0, &c.usage)
		if err == nil {
			c.hasState = true
			c.release()
			return nil
		}
		if !errors.Is(err, syscall.EINTR) {
			if errors.Is(err, syscall.ECHILD) {
				c.release()
			}
			return os.NewSyscallError("wait4", err)
		}
	}
}

// release marks the child reaped (or gone) and closes its pidfd; mu is
// held.
func (c *child) release() {
	c.done = true
	if c.pidfd >= 0 {
		unix.Close(c.pidfd)
		c.pidfd = -1
	}
}

// reaped reports whether Wait has reaped the process (or found it gone).
func (c *child) reaped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

// hasExitState reports whether Wait has reaped the process and has its
// status.
func (c *child) hasExitState() bool {
	_, _, ok := c.exitState()
	return ok
}

// exitState returns the process's wait status and resource usage once
// Wait has reaped it; ok is false before.
func (c *child) exitState() (ws syscall.WaitStatus, ru *syscall.Rusage, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.hasState {
		return 0, nil, false
	}
	usage := c.usage
	return c.status, &usage, true
}
