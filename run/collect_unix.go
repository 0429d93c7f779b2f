//go:build linux || darwin

package run

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// collectStatus fills the script's exit status and usage into res, from
// the init process's report or its own exit (see ending), and returns the
// run's error: runErr, the handshake's, unless the watchdog ended the
// run, else an error of the status's.
func (l *launchState) collectStatus(e ending, runErr error, res *Result) error {
	st := l.init.st
	status, statusErr := l.exitStatus(e, res)
	if runErr == nil && statusErr != nil {
		runErr = statusErr
	}
	stopped := res.TimedOut || res.Canceled || res.LimitExceeded != ""
	if runErr == nil && st.pidns && res.Started && status == nil && !stopped {
		// The init process did not report: the script's own status is
		// unknown, and the exit code or signal is the init process's,
		// not the script's.
		if res.Signal != "" {
			runErr = fmt.Errorf("%w: the init process was killed by %s before the script's status was sent", ErrStart, res.Signal)
		} else {
			runErr = fmt.Errorf("%w: the init process failed (exit %d) before the script's status was sent", ErrStart, res.ExitCode)
		}
		res.ExitCode, res.Signal = -1, ""
	}
	if !res.Started {
		// The init process's status, not a script's: a refused run's
		// init process is killed, which is no signal of the script's.
		res.ExitCode, res.Signal = -1, ""
	}
	// (finishLater owns the init process once it has reported.)
	if !e.reported && runErr == nil && e.waitErr != nil && !st.proc.HasExitState() {
		runErr = fmt.Errorf("%w: wait: %v", ErrStart, e.waitErr)
	}
	if runErr != nil && stopped && !errors.Is(runErr, ErrIsolation) {
		// The handshake broke because we killed the sandbox; that is a
		// timeout, a cancellation or a limit, not a start failure.
		runErr = nil
	}
	return runErr
}

// exitStatus fills the exit status and usage into res: the script's from
// the init process's report, else the init process's own (see
// posix.ScriptStatus, fillExit). status is the script's, nil when unknown.
func (l *launchState) exitStatus(e ending, res *Result) (status *syscall.WaitStatus, err error) {
	if e.reported {
		rep := stageconfig.ParseReaperReport(e.msg)
		fillStatus(res, rep.Status)
		res.CPUTime, res.MaxRSSKB = rep.User+rep.System, rep.MaxRSSKiB
		return &rep.Status, nil
	}
	st := l.init.st
	initExited, initCode := false, 0
	if ws, _, ok := st.proc.ExitState(); st.pidns && ok && ws.Exited() {
		initExited, initCode = true, ws.ExitStatus()
	}
	status, err = posix.ScriptStatus(io.MultiReader(bytes.NewReader(e.msg), l.init.statusR), initExited, initCode)
	fillExit(res, st.proc, status)
	return status, err
}

// fillExit copies exit status and resource usage into res. The exit status
// is the script's (status, from the init process's report) when known,
// else that of the init process; the resource usage is always the init
// process's, which includes every process of the run it or its
// posix.Descendants waited for.
func fillExit(res *Result, proc *posix.Process, status *syscall.WaitStatus) {
	ws, ru, ok := proc.ExitState()
	if !ok {
		return
	}
	if status != nil {
		ws = *status
	}
	fillStatus(res, ws)
	if ru != nil {
		res.CPUTime = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		res.MaxRSSKB = posix.MaxRSSKB(ru)
	}
}

// fillStatus sets the exit code or the signal of res from ws.
func fillStatus(res *Result, ws syscall.WaitStatus) {
	if ws.Signaled() {
		res.ExitCode = -1
		res.Signal = unix.SignalName(ws.Signal())
		if res.Signal == "" {
			res.Signal = fmt.Sprintf("signal %d", int(ws.Signal()))
		}
	} else {
		res.ExitCode = ws.ExitStatus()
	}
}
