package posix

import (
	"os"
	"syscall"
)

// Process is the supervisor's handle to the init process, started
// by os/exec.
type Process struct {
	proc  *os.Process
	state *os.ProcessState
}

// ProcessOf returns the handle to an init process already started.
func ProcessOf(p *os.Process) *Process { return &Process{proc: p} }

// Pid returns the process's pid.
func (ip *Process) Pid() int { return ip.proc.Pid }

// Kill sends the process SIGKILL (os.Process knows when it is reaped).
func (ip *Process) Kill() error { return ip.proc.Kill() }

// MaySignal reports whether this process may signal the init process:
// always on macOS, where the run keeps the caller's uid.
func (ip *Process) MaySignal() bool { return true }

// Wait reaps the process and keeps its state.
func (ip *Process) Wait() error {
	st, err := ip.proc.Wait()
	if st != nil {
		ip.state = st
	}
	return err
}

// WaitSweeping is Wait, then sweep (when not nil). KillAll on
// darwin sweeps the run's Descendants only while os.Process does not
// know the process reaped, and kills its process group either way.
func (ip *Process) WaitSweeping(sweep func()) error {
	err := ip.Wait()
	if sweep != nil {
		sweep()
	}
	return err
}

// HasExitState reports whether Wait has reaped the process.
func (ip *Process) HasExitState() bool { return ip.state != nil }

// ExitState returns the process's wait status and resource usage once
// Wait has reaped it; ok is false before.
func (ip *Process) ExitState() (ws syscall.WaitStatus, ru *syscall.Rusage, ok bool) {
	if ip.state == nil {
		return 0, nil, false
	}
	ws, _ = ip.state.Sys().(syscall.WaitStatus)
	ru, _ = ip.state.SysUsage().(*syscall.Rusage)
	return ws, ru, true
}
