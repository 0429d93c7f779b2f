//go:build linux || darwin

package posix

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// Ending is how the run's processes ended: with the init process's
// report of the script's status (Msg, Reported), or with the init
// process's own exit (WaitErr is its wait's error).
type Ending struct {
	Msg      []byte
	Reported bool
	WaitErr  error
}

// WaitEnd waits for the run of the init process proc to end. Under a PID
// namespace (pidns) the init process reports the script's status and the
// run's usage on statusR once every process of the run is gone, then
// exits: the result is complete at the report, and the init process's
// exit, the namespaces' teardown and the cgroup's removal are left to
// FinishLater, off the caller's path. Without a report (no PID namespace,
// an init process killed, reporting false: the script never started
// under an init process that reaps), the init process is waited for
// here.
func WaitEnd(proc *Process, pidns, reporting bool, statusR io.Reader) Ending {
	var e Ending
	if reporting {
		e.Msg, e.Reported = ReadStatusReport(statusR)
	}
	if e.Reported {
		return e
	}
	// Without a PID namespace the kernel does not end the tree with its
	// first process: what is left of the process group and session, and
	// any descendant reparented to us, is killed (KillAll), while the
	// first process's pid is still its own: before it is reaped.
	if pidns {
		e.WaitErr = proc.Wait()
	} else {
		e.WaitErr = proc.WaitSweeping(func() { KillAll(proc, false) })
	}
	return e
}

// Collect fills the script's exit status and usage into out, from the
// init process's report or its own exit (see Ending), and returns the
// run's error: runErr, the handshake's, unless the watchdog ended the
// run (out.TimedOut, Canceled or LimitExceeded set), else an error of
// the status's. proc is the init process, pidns says it is the first of
// the run's PID namespace, statusR is the supervisor's end of its status
// pipe.
func Collect(e Ending, proc *Process, pidns bool, statusR io.Reader, runErr error, out *backend.Outcome) error {
	status, statusErr := exitStatus(e, proc, pidns, statusR, out)
	if runErr == nil && statusErr != nil {
		runErr = statusErr
	}
	stopped := out.TimedOut || out.Canceled || out.LimitExceeded != ""
	if runErr == nil && pidns && out.Started && status == nil && !stopped {
		// The init process did not report: the script's own status is
		// unknown, and the exit code or signal is the init process's,
		// not the script's.
		if out.Signal != "" {
			runErr = fmt.Errorf("%w: the init process was killed by %s before the script's status was sent", backend.ErrStart, out.Signal)
		} else {
			runErr = fmt.Errorf("%w: the init process failed (exit %d) before the script's status was sent", backend.ErrStart, out.ExitCode)
		}
		out.ExitCode, out.Signal = -1, ""
	}
	if !out.Started {
		if runErr != nil && errors.Is(runErr, io.EOF) {
			// The init process ended before its report: how it ended is
			// the only clue left.
			runErr = fmt.Errorf("%w (%s)", runErr, initEnding(out))
		}
		// The init process's status, not a script's: a refused run's
		// init process is killed, which is no signal of the script's.
		out.ExitCode, out.Signal = -1, ""
	}
	// (FinishLater owns the init process once it has reported.)
	if !e.Reported && runErr == nil && e.WaitErr != nil && !proc.HasExitState() {
		runErr = fmt.Errorf("%w: wait: %v", backend.ErrStart, e.WaitErr)
	}
	if runErr != nil && stopped && !errors.Is(runErr, backend.ErrIsolation) {
		// The handshake broke because we killed the sandbox; that is a
		// timeout, a cancellation or a limit, not a start failure.
		runErr = nil
	}
	return runErr
}

// initEnding says how the init process ended, from the status
// exitStatus filled into out.
func initEnding(out *backend.Outcome) string {
	switch {
	case out.Signal != "":
		return "the init process was killed by " + out.Signal
	case out.ExitCode >= 0:
		return fmt.Sprintf("the init process ended with exit status %d", out.ExitCode)
	}
	return "how the init process ended is unknown"
}

// exitStatus fills the exit status and usage into out: the script's from
// the init process's report, else the init process's own (see
// ScriptStatus, fillExit). status is the script's, nil when unknown.
func exitStatus(e Ending, proc *Process, pidns bool, statusR io.Reader, out *backend.Outcome) (status *syscall.WaitStatus, err error) {
	if e.Reported {
		rep := stageconfig.ParseReaperReport(e.Msg)
		fillStatus(out, rep.Status)
		out.CPUTime, out.MaxRSSKB = rep.User+rep.System, rep.MaxRSSKiB
		return &rep.Status, nil
	}
	initExited, initCode := false, 0
	if ws, _, ok := proc.ExitState(); pidns && ok && ws.Exited() {
		initExited, initCode = true, ws.ExitStatus()
	}
	status, err = ScriptStatus(io.MultiReader(bytes.NewReader(e.Msg), statusR), initExited, initCode)
	fillExit(out, proc, status)
	return status, err
}

// fillExit copies exit status and resource usage into out. The exit
// status is the script's (status, from the init process's report) when
// known, else that of the init process; the resource usage is always the
// init process's, which includes every process of the run it or its
// Descendants waited for.
func fillExit(out *backend.Outcome, proc *Process, status *syscall.WaitStatus) {
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
		out.MaxRSSKB = MaxRSSKB(ru)
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
