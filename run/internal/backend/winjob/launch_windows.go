package winjob

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"github.com/skill-sandbox/skill-sandbox/run/internal/winproc"

	"golang.org/x/sys/windows"
)

// A Windows run: no init process. The supervisor creates a Job Object with
// the run's limits, starts the script suspended, puts it in the job before
// it runs an instruction, and resumes it; every process it starts is in
// the job too. The time limit, a cancellation, too much output and the
// script's own exit terminate the whole job. None of this has run here:
// see docs/platforms.md.

// windowsWaitDelay bounds how long Wait waits for the output pipes once the
// job is gone.
const windowsWaitDelay = 2 * time.Second

// launchState is a Windows launch's own state: the script's output
// captures, the run's Job Object and the script's process. Its plan is
// what run's prepare decided, not changed here.
type launchState struct {
	plan           *backend.Spec
	stdout, stderr *backend.Capture
	job            windows.Handle // 0 without one
	cmd            *exec.Cmd
	proc           windows.Handle // the script's process
	begun          time.Time      // when the script was started, for Outcome.Duration
}

// Launch runs p's script in its Job Object, waits for it and fills out.
func Launch(ctx context.Context, p *backend.Spec, out *backend.Outcome) error {
	l := &launchState{plan: p}
	if ctx.Err() != nil {
		out.Canceled = true
		return nil
	}
	var jobErr error
	if !stageconfig.Has(p.Disabled, stageconfig.LayerJob) {
		l.job, jobErr = winproc.NewJob(jobLimitsOf(p))
	}
	if l.job != 0 {
		defer windows.CloseHandle(l.job) // KILL_ON_JOB_CLOSE: nothing of the run outlives it
	}
	out.Applied, out.Missing = windowsLayers(p, jobErr)
	if blocking := backend.Refusing(p, out.Applied, out.Missing); len(blocking) > 0 {
		return backend.IsolationError(blocking)
	}
	backend.WarnDegraded(p.Warnings, out.Missing)
	wd := backend.NewWatchdog()
	l.stdout, l.stderr = backend.NewCaptures(p.Output, wd)
	if err := l.start(); err != nil {
		return err
	}
	defer windows.CloseHandle(l.proc)
	out.Started = true
	// Both goroutines use the job and process handles: they end before
	// the handles are closed (a closed handle's value can be reused).
	wd.Start(ctx, p.Timeout, l.terminate)
	exited := l.endWithScript()
	waitErr := l.cmd.Wait()
	wd.Finish()
	exited.Wait()
	out.Duration = time.Since(l.begun)
	fillJobStats(l.job, out)
	backend.CollectOutput(l.stdout, l.stderr, out)
	backend.RecordEnd(wd, out)
	return l.collectExit(wd, waitErr, out)
}

// start starts the script suspended, puts it in the run's job before it
// runs an instruction, and resumes it.
func (l *launchState) start() error {
	p := l.plan
	cmdline, err := winproc.CommandLine(p.Config.Argv)
	if err != nil {
		return err
	}
	sysRoot, err := windows.GetSystemWindowsDirectory()
	if err != nil {
		sysRoot = `C:\Windows`
	}
	l.cmd = &exec.Cmd{
		Path:   p.Config.Argv[0],
		Args:   p.Config.Argv,
		Env:    winproc.Env(p.Config.Env, sysRoot, p.Config.WorkDir, filepath.Dir(p.Config.Argv[0])),
		Dir:    p.Config.Dir,
		Stdin:  p.Stdin,
		Stdout: l.stdout,
		Stderr: l.stderr,
		// CREATE_NO_WINDOW gives the script a console of its own with no
		// window, never the caller's (whose input it could read and
		// whose screen it could write).
		SysProcAttr: &syscall.SysProcAttr{CmdLine: cmdline,
			CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_NO_WINDOW},
		WaitDelay: windowsWaitDelay,
	}
	// CreateProcess: the script follows, suspended, as the caller.
	if err := l.cmd.Start(); err != nil {
		return fmt.Errorf("%w: %v", backend.ErrStart, err)
	}
	l.begun = time.Now()
	l.proc, err = winproc.Adopt(l.job, l.cmd.Process.Pid)
	if err != nil {
		l.cmd.Process.Kill()
		l.cmd.Wait()
		return fmt.Errorf("%w: putting the script in its job: %v", backend.ErrStart, err)
	}
	return nil
}

// terminate ends every process of the run.
func (l *launchState) terminate() {
	if l.job != 0 {
		windows.TerminateJobObject(l.job, 1)
	}
	l.cmd.Process.Kill()
}

// endWithScript ends the run when the script exits: what it left running
// dies with the job, as a PID namespace's processes die with its init
// process on Linux. The returned group is done once that has happened.
func (l *launchState) endWithScript() *sync.WaitGroup {
	var exited sync.WaitGroup
	exited.Add(1)
	go func() {
		defer exited.Done()
		windows.WaitForSingleObject(l.proc, windows.INFINITE)
		if l.job != 0 {
			windows.TerminateJobObject(l.job, 1)
		}
	}()
	return &exited
}

// collectExit fills the script's exit code into out, and its CPU time
// when the job did not give it, and returns the wait's error when the
// script's state is unknown.
func (l *launchState) collectExit(wd *backend.Watchdog, waitErr error, out *backend.Outcome) error {
	if ps := l.cmd.ProcessState; ps != nil {
		out.ExitCode = ps.ExitCode()
		if out.CPUTime == 0 {
			out.CPUTime = ps.UserTime() + ps.SystemTime()
		}
	}
	if wd.Stopped() {
		// Terminated by the supervisor: reported as Linux reports a
		// kill, so that records of both platforms compare.
		out.ExitCode, out.Signal = -1, "SIGKILL"
	}
	if waitErr != nil && l.cmd.ProcessState == nil {
		return fmt.Errorf("%w: wait: %v", backend.ErrStart, waitErr)
	}
	return nil
}

// fillJobStats copies the job's totals into out: CPU time of every
// process, peak committed memory of the job (PeakMemoryKB) and of its
// largest process (MaxRSSKB; commit, not resident memory).
func fillJobStats(job windows.Handle, out *backend.Outcome) {
	if job == 0 {
		return
	}
	if cpu, ok := winproc.CPUTime(job); ok {
		out.CPUTime = cpu
	}
	if jobKB, processKB, ok := winproc.PeakMemory(job); ok {
		out.PeakMemoryKB, out.MaxRSSKB = jobKB, processKB
	}
}
