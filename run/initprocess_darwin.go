package run

import (
	"os"
	"syscall"
)

// initProcess is the supervisor's handle to the init process, started
// by os/exec.
type initProcess struct {
	proc  *os.Process
	state *os.ProcessState
}

// initProcessOf returns the handle to an init process already started.
func initProcessOf(p *os.Process) *initProcess { return &initProcess{proc: p} }

// Pid returns the process's pid.
func (ip *initProcess) Pid() int { return ip.proc.Pid }

// Kill sends the process SIGKILL (os.Process knows when it is reaped).
func (ip *initProcess) Kill() error { return ip.proc.Kill() }

// Wait reaps the process and keeps its state.
func (ip *initProcess) Wait() error {
	st, err := ip.proc.Wait()
	if st != nil {
		ip.state = st
	}
	return err
}

// waitSweeping is Wait, then sweep (when not nil). killSandbox on
// darwin sweeps the run's descendants only while os.Process does not
// know the process reaped, and kills its process group either way.
func (ip *initProcess) waitSweeping(sweep func()) error {
	err := ip.Wait()
	if sweep != nil {
		sweep()
	}
	return err
}

// hasExitState reports whether Wait has reaped the process.
func (ip *initProcess) hasExitState() bool { return ip.state != nil }

// exitState returns the process's wait status and resource usage once
// Wait has reaped it; ok is false before.
func (ip *initProcess) exitState() (ws syscall.WaitStatus, ru *syscall.Rusage, ok bool) {
	if ip.state == nil {
		return 0, nil, false
	}
	ws, _ = ip.state.Sys().(syscall.WaitStatus)
	ru, _ = ip.state.SysUsage().(*syscall.Rusage)
	return ws, ru, true
}
