package run

import (
	"os"
	"syscall"
)

// child is the init stage's process, started by os/exec.
type child struct {
	proc  *os.Process
	state *os.ProcessState
}

// childOf returns the child of a process already started.
func childOf(p *os.Process) *child { return &child{proc: p} }

// Pid returns the process's pid.
func (c *child) Pid() int { return c.proc.Pid }

// Kill sends the process SIGKILL (os.Process knows when it is reaped).
func (c *child) Kill() error { return c.proc.Kill() }

// Wait reaps the process and keeps its state.
func (c *child) Wait() error {
	st, err := c.proc.Wait()
	if st != nil {
		c.state = st
	}
	return err
}

// waitSweeping is Wait, then sweep (when not nil). killSandbox on
// darwin sweeps the run's descendants only while os.Process does not
// know the process reaped, and kills its process group either way.
func (c *child) waitSweeping(sweep func()) error {
	err := c.Wait()
	if sweep != nil {
		sweep()
	}
	return err
}

// hasExitState reports whether Wait has reaped the process.
func (c *child) hasExitState() bool { return c.state != nil }

// exitState returns the process's wait status and resource usage once
// Wait has reaped it; ok is false before.
func (c *child) exitState() (ws syscall.WaitStatus, ru *syscall.Rusage, ok bool) {
	if c.state == nil {
		return 0, nil, false
	}
	ws, _ = c.state.Sys().(syscall.WaitStatus)
	ru, _ = c.state.SysUsage().(*syscall.Rusage)
	return ws, ru, true
}
