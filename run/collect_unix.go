//go:build linux || darwin

package run

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// collectStatus fills the script's exit status and usage into out, from
// the init process's report or its own exit (see ending), and returns the
// run's error: runErr, the handshake's, unless the watchdog ended the
// run, else an error of the status's.
func (l *launchState) collectStatus(e ending, runErr error, out *backend.Outcome) error {
	st := l.init.st
	status, statusErr := l.exitStatus(e, out)
	if runErr == nil && statusErr != nil {
		runErr = statusErr
	}
	stopped := out.TimedOut || out.Canceled || out.LimitExceeded != ""
	if runErr == nil && st.pidns && out.Started && status == nil && !stopped {
		// The init process did not report: the script's own status is
		// unknown, and the exit code or signal is the init process's,
		// not the script's.
		if out.Signal != "" {
			runErr = fmt.Errorf("%w: the init process was killed by %s before the script's status was sent", ErrStart, out.Signal)
		} else {
			runErr = fmt.Errorf("%w: the init process failed (exit %d) before the script's status was sent", ErrStart, out.ExitCode)
		}
		out.ExitCode, out.Signal = -1, ""
	}
	if !out.Started {
		// The init process's status, not a script's: a refused run's
		// init process is killed, which is no signal of the script's.
		out.ExitCode, out.Signal = -1, ""
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

// exitStatus fills the exit status and usage into out: the script's from
// the init process's report, else the init process's own (see
// posix.ScriptStatus, fillExit). status is the script's, nil when unknown.
func (l *launchState) exitStatus(e ending, out *backend.Outcome) (status *syscall.WaitStatus, err error) {
	if e.reported {
		rep := stageconfig.ParseReaperReport(e.msg)
		fillStatus(out, rep.Status)
		out.CPUTime, out.MaxRSSKB = rep.User+rep.System, rep.MaxRSSKiB
		return &rep.Status, nil
	}
	st := l.init.st
	initExited, initCode := false, 0
	if ws, _, ok := st.proc.ExitState(); st.pidns && ok && ws.Exited() {
		initExited, initCode = true, ws.ExitStatus()
	}
	status, err = posix.ScriptStatus(io.MultiReader(bytes.NewReader(e.msg), l.init.statusR), initExited, initCode)
	fillExit(out, st.proc, status)
	return status, err
}

// fillExit copies exit status and resource usage into out. The exit status
// is the script's (status, from the init process's report) when known,
// else that of the init process; the resource usage is always the init
// process's, which includes every process of the run it or its
// posix.Descendants waited for.
func fillExit(out *backend.Outcome, proc *posix.Process, status *syscall.WaitStatus) {
	ws, ru, ok := proc.ExitState()
	if !ok {
		return
	}
	if status != nil {
		ws = *status
	}
	fillStatus(out, ws)
	if ru != nil {
		out.CPUTime = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		out.MaxRSSKB = posix.MaxRSSKB(ru)
	}
}

// fillStatus sets the exit code or the signal of out from ws.
func fillStatus(out *backend.Outcome, ws syscall.WaitStatus) {
	if ws.Signaled() {
		out.ExitCode = -1
		out.Signal = unix.SignalName(ws.Signal())
		if out.Signal == "" {
			out.Signal = fmt.Sprintf("signal %d", int(ws.Signal()))
		}
	} else {
		out.ExitCode = ws.ExitStatus()
	}
}
