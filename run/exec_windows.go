package run

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

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

// ExecInitIfRequested does nothing on Windows: there is no init process.
func ExecInitIfRequested() {}

// sandboxIdentity: the script runs as the caller; there are no uids.
func sandboxIdentity() (int, int) { return -1, -1 }

// checkReachable has nothing to check: the script runs as the caller.
func checkReachable(int, int, string, string, string) error { return nil }

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime, TotalKernelTime                       int64
	ThisPeriodTotalUserTime, ThisPeriodTotalKernelTime   int64
	TotalPageFaultCount, TotalProcesses, ActiveProcesses uint32
	TotalTerminatedProcesses                             uint32
}

// newJob creates the run's Job Object: the job's committed memory, the
// number of live processes and each process's CPU time are capped; the
// job's processes die when its last handle closes (so also when the
// supervisor dies), die rather than show an error dialog, and may not
// touch the desktop, the clipboard, other processes' windows, system
// settings or the session (log off, shut down).
func newJob(l jobLimits) (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("CreateJobObject: %v", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
		windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION | windows.JOB_OBJECT_LIMIT_JOB_MEMORY |
		windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS | windows.JOB_OBJECT_LIMIT_PROCESS_TIME
	info.BasicLimitInformation.ActiveProcessLimit = l.ActiveProcesses
	info.BasicLimitInformation.PerProcessUserTimeLimit = l.ProcessUserTime
	info.JobMemoryLimit = uintptr(l.JobMemoryBytes)
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("job limits: %v", err)
	}
	ui := windows.JOBOBJECT_BASIC_UI_RESTRICTIONS{UIRestrictionsClass: windows.JOB_OBJECT_UILIMIT_DESKTOP |
		windows.JOB_OBJECT_UILIMIT_DISPLAYSETTINGS | windows.JOB_OBJECT_UILIMIT_EXITWINDOWS |
		windows.JOB_OBJECT_UILIMIT_GLOBALATOMS | windows.JOB_OBJECT_UILIMIT_HANDLES |
		windows.JOB_OBJECT_UILIMIT_READCLIPBOARD | windows.JOB_OBJECT_UILIMIT_WRITECLIPBOARD |
		windows.JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectBasicUIRestrictions,
		uintptr(unsafe.Pointer(&ui)), uint32(unsafe.Sizeof(ui))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("job UI restrictions: %v", err)
	}
	return job, nil
}

// launchOS is the Windows part of a launch's state: the run's Job
// Object and the script's process.
type launchOS struct {
	job   windows.Handle // 0 without one
	cmd   *exec.Cmd
	proc  windows.Handle // the script's process
	begun time.Time      // when the script was started, for Result.Duration
}

// launch runs the script in its Job Object and waits for it.
func launch(ctx context.Context, l *launchState, res *Result) error {
	p := l.plan
	if ctx.Err() != nil {
		res.Canceled = true
		return nil
	}
	var jobErr error
	if !stageconfig.Has(p.disabled, LayerJob) {
		l.job, jobErr = newJob(jobLimitsOf(p))
	}
	if l.job != 0 {
		defer windows.CloseHandle(l.job) // KILL_ON_JOB_CLOSE: nothing of the run outlives it
	}
	res.Applied, res.Missing = windowsLayers(p, jobErr)
	if blocking := refusing(p, res.Applied, res.Missing); len(blocking) > 0 {
		return isolationError(blocking)
	}
	warnDegraded(p.warn, res.Missing)
	wd := newWatchdog(l)
	if err := l.start(); err != nil {
		return err
	}
	defer windows.CloseHandle(l.proc)
	res.Started = true
	// Both goroutines use the job and process handles: they end before
	// the handles are closed (a closed handle's value can be reused).
	wd.start(ctx, p.timeout, l.terminate)
	exited := l.endWithScript()
	waitErr := l.cmd.Wait()
	wd.finish()
	exited.Wait()
	res.Duration = time.Since(l.begun)
	fillJobStats(l.job, res)
	l.collectOutput(res)
	wd.record(res)
	return l.collectExit(wd, waitErr, res)
}

// start starts the script suspended, puts it in the run's job before it
// runs an instruction, and resumes it.
func (l *launchState) start() error {
	p := l.plan
	cmdline, err := windowsCommandLine(p.cfg.Argv)
	if err != nil {
		return err
	}
	sysRoot, err := windows.GetSystemWindowsDirectory()
	if err != nil {
		sysRoot = `C:\Windows`
	}
	l.cmd = &exec.Cmd{
		Path:   p.cfg.Argv[0],
		Args:   p.cfg.Argv,
		Env:    windowsEnv(p.cfg.Env, sysRoot, p.cfg.WorkDir, filepath.Dir(p.cfg.Argv[0])),
		Dir:    p.cfg.Dir,
		Stdin:  p.stdin,
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
		return fmt.Errorf("%w: %v", ErrStart, err)
	}
	l.begun = time.Now()
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_SUSPEND_RESUME|
		windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(l.cmd.Process.Pid))
	if err == nil {
		l.proc = h
		if l.job != 0 {
			err = windows.AssignProcessToJobObject(l.job, h)
		}
		if err == nil {
			err = resumeProcess(h)
		}
	}
	if err != nil {
		if h != 0 {
			windows.CloseHandle(h)
		}
		l.cmd.Process.Kill()
		l.cmd.Wait()
		return fmt.Errorf("%w: putting the script in its job: %v", ErrStart, err)
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

// collectExit fills the script's exit code into res, and its CPU time
// when the job did not give it, and returns the wait's error when the
// script's state is unknown.
func (l *launchState) collectExit(wd *watchdog, waitErr error, res *Result) error {
	if ps := l.cmd.ProcessState; ps != nil {
		res.ExitCode = ps.ExitCode()
		if res.CPUTime == 0 {
			res.CPUTime = ps.UserTime() + ps.SystemTime()
		}
	}
	if wd.stopped() {
		// Terminated by the supervisor: reported as Linux reports a
		// kill, so that records of both platforms compare.
		res.ExitCode, res.Signal = -1, "SIGKILL"
	}
	if waitErr != nil && l.cmd.ProcessState == nil {
		return fmt.Errorf("%w: wait: %v", ErrStart, waitErr)
	}
	return nil
}

// resumeProcess resumes every thread of a process created suspended.
// CreateProcess's thread handle is not kept by os/exec, so the process is
// resumed as a whole (ntdll's NtResumeProcess).
func resumeProcess(h windows.Handle) error {
	proc := windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")
	if err := proc.Find(); err != nil {
		return err
	}
	if status, _, _ := proc.Call(uintptr(h)); status != 0 {
		return fmt.Errorf("NtResumeProcess: NTSTATUS %#x", status)
	}
	return nil
}

// fillJobStats copies the job's totals into res: CPU time of every
// process, peak committed memory of the job (PeakMemoryKB) and of its
// largest process (MaxRSSKB; commit, not resident memory).
func fillJobStats(job windows.Handle, res *Result) {
	if job == 0 {
		return
	}
	var acct jobAccounting
	if windows.QueryInformationJobObject(job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&acct)), uint32(unsafe.Sizeof(acct)), nil) == nil {
		res.CPUTime = time.Duration(acct.TotalUserTime+acct.TotalKernelTime) * 100
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if windows.QueryInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil) == nil {
		res.PeakMemoryKB = int64(info.PeakJobMemoryUsed / 1024)
		res.MaxRSSKB = int64(info.PeakProcessMemoryUsed / 1024)
	}
}

// writableFolder leaves a missing write folder to the mkdir of the run
// here.
func writableFolder(string) error { return nil }
