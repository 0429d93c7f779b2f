package posix

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Process is the supervisor's handle to the init process, known by
// the pid its clone returned, and signalled and reaped here rather than
// through an *os.Process: the first os.FindProcess of a process checks
// whether pidfds work, with a vfork of a child of its own, about 0.12 ms
// of CPU on every call of the CLI, which on 2 cores the init process
// building its sandbox needs.
//
// A signal or a wait never reaches another process that got the pid:
// both go through a pidfd where the kernel has them (pidfd_open(2),
// Linux 5.3), opened while the init process is still unreaped, so it is
// its; and a signal goes only while the init process is not reaped, which
// Wait does under mu. An init process that vanished without Wait (reaped
// elsewhere, as when the program ignores SIGCHLD) counts as gone: no
// signal goes to its pid after, and no exit state is made up. Without a
// pidfd the pid is used, which holds as long as nothing else in this
// process reaps children it did not start (nothing here waits for pid
// -1).
type Process struct {
	pid int

	waitMu  sync.Mutex // one Wait at a time
	sweepMu sync.Mutex // one sweep of the run's session at a time (KillAll)

	mu       sync.Mutex // held while signalling, and while reaping
	pidfd    int        // -1 until opened (see pidfdLocked), and once reaped
	tried    bool       // pidfd_open was tried
	done     bool       // reaped, or gone: no more signals
	hasState bool       // reaped by Wait: status and usage are its
	status   syscall.WaitStatus
	usage    syscall.Rusage
}

// NewProcess returns the handle to the init process whose pid a
// clone returned. Its pidfd is opened on first use: right after the clone
// the init process waits for its program.
func NewProcess(pid int) *Process { return &Process{pid: pid, pidfd: -1} }

// Pid returns the process's pid.
func (ip *Process) Pid() int { return ip.pid }

// pidfdLocked returns the init process's pidfd, opened on first use, or -1
// where the kernel has none; mu is held and the process not reaped (so the
// pid is still its).
func (ip *Process) pidfdLocked() int {
	if !ip.tried {
		ip.tried = true
		if fd, err := unix.PidfdOpen(ip.pid, 0); err == nil { // close-on-exec
			ip.pidfd = fd
		}
	}
	return ip.pidfd
}

// Kill sends the process SIGKILL, unless it is already reaped
// (os.ErrProcessDone then).
func (ip *Process) Kill() error {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.done {
		return os.ErrProcessDone
	}
	if fd := ip.pidfdLocked(); fd >= 0 {
		err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		if err != unix.ENOSYS && err != unix.EPERM {
			return err
		}
	}
	return unix.Kill(ip.pid, unix.SIGKILL)
}

// MaySignal reports whether this process may signal the init process:
// false only when the kernel refuses (EPERM), as it does to a supervisor
// without CAP_KILL (a container's root) when the run has a host uid of its
// own and no user namespace the supervisor owns.
func (ip *Process) MaySignal() bool {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if ip.done {
		return true
	}
	var err error
	if fd := ip.pidfdLocked(); fd >= 0 {
		err = unix.PidfdSendSignal(fd, 0, nil, 0)
	} else {
		err = unix.Kill(ip.pid, 0)
	}
	return err != unix.EPERM
}

// Wait blocks until the process has exited, then reaps it and keeps its
// status and resource usage (see ExitState). Waiting for a process
// already reaped returns os.ErrProcessDone.
func (ip *Process) Wait() error { return ip.WaitSweeping(nil) }

// WaitSweeping is Wait, calling sweep (when not nil) once the process
// has exited but before it is reaped: its pid, and so its process group
// and session, cannot be another's until then. Where waiting fails sweep
// is called all the same: a process of the run must not outlive it, and
// one left in its group or session keeps their id from being reused.
func (ip *Process) WaitSweeping(sweep func()) error {
	ip.waitMu.Lock()
	defer ip.waitMu.Unlock()
	swept := false
	defer func() {
		if sweep != nil && !swept {
			sweep()
		}
	}()
	ip.mu.Lock()
	if ip.done {
		ip.mu.Unlock()
		return os.ErrProcessDone
	}
	// Only release closes the pidfd, and only here, under waitMu.
	idType, id := unix.P_PID, ip.pid
	if fd := ip.pidfdLocked(); fd >= 0 {
		idType, id = unix.P_PIDFD, fd
	}
	ip.mu.Unlock()
	// Block until it can be reaped, without reaping it: a Kill meanwhile
	// still finds the pid this process's.
	var info unix.Siginfo
	for {
		err := unix.Waitid(idType, id, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			ip.mu.Lock()
			defer ip.mu.Unlock()
			if err == unix.ECHILD {
				ip.release()
			}
			return os.NewSyscallError("waitid", err)
		}
	}
	if sweep != nil {
		sweep()
		swept = true
	}
	ip.mu.Lock()
	defer ip.mu.Unlock()
	for {
		// A zombie child of ours, checked through its pidfd where there
		// is one: its pid is its own until this reaps it.
		_, err := syscall.Wait4(ip.pid, &ip.status, 0, &ip.usage)
		if err == nil {
			ip.hasState = true
			ip.release()
			return nil
		}
		if !errors.Is(err, syscall.EINTR) {
			if errors.Is(err, syscall.ECHILD) {
				ip.release()
			}
			return os.NewSyscallError("wait4", err)
		}
	}
}

// release marks the init process reaped (or gone) and closes its pidfd; mu is
// held.
func (ip *Process) release() {
	ip.done = true
	if ip.pidfd >= 0 {
		unix.Close(ip.pidfd)
		ip.pidfd = -1
	}
}

// HasExitState reports whether Wait has reaped the process and has its
// status.
func (ip *Process) HasExitState() bool {
	_, _, ok := ip.ExitState()
	return ok
}

// ExitState returns the process's wait status and resource usage once
// Wait has reaped it; ok is false before.
func (ip *Process) ExitState() (ws syscall.WaitStatus, ru *syscall.Rusage, ok bool) {
	ip.mu.Lock()
	defer ip.mu.Unlock()
	if !ip.hasState {
		return 0, nil, false
	}
	usage := ip.usage
	return ip.status, &usage, true
}
