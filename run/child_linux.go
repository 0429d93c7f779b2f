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
// A signal can never reach another process that got the pid: an unreaped
// child keeps its pid, Wait reaps only under mu, and signal checks under
// mu that the child is not yet reaped. That holds as long as nothing else
// in this process reaps a child it did not start (no wait for any child,
// pid -1, here).
type child struct {
	pid int

	waitMu sync.Mutex // one Wait at a time

	mu     sync.Mutex // held while signalling, and while reaping
	done   bool       // reaped
	status syscall.WaitStatus
	usage  syscall.Rusage
}

// newChild returns the child whose pid a clone returned.
func newChild(pid int) *child { return &child{pid: pid} }

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
			return os.NewSyscallError("waitid", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		_, err := syscall.Wait4(c.pid, &c.status, 0, &c.usage)
		if err == nil {
			c.done = true
			return nil
		}
		if !errors.Is(err, syscall.EINTR) {
			return os.NewSyscallError("wait4", err)
		}
	}
}

// reaped reports whether Wait has reaped the process.
func (c *child) reaped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

// exitState returns the process's wait status and resource usage once
// Wait has reaped it; ok is false before.
func (c *child) exitState() (ws syscall.WaitStatus, ru *syscall.Rusage, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		return 0, nil, false
	}
	usage := c.usage
	return c.status, &usage, true
}
