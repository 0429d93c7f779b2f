//go:build linux || darwin

package run

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
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
// scriptStatus, fillExit). status is the script's, nil when unknown.
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
	status, err = scriptStatus(io.MultiReader(bytes.NewReader(e.msg), l.init.statusR), initExited, initCode)
	fillExit(res, st.proc, status)
	return status, err
}

// waitOutput waits for both output copies to reach EOF; if something still
// holds the pipes after outputGrace, it closes them.
func waitOutput(copies *sync.WaitGroup, pipes ...*os.File) {
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(outputGrace):
		for _, f := range pipes {
			f.Close()
		}
		<-drained
	}
}

// scriptStatus reads the script's wait status from the init process's
// report (the init process of the PID namespace), when launch did not
// get a whole one before the init process exited. Without a PID
// namespace, or when the init process was killed first (timeout,
// cancellation), there is none and the init process's own status is the
// run's (nil, nil). An init process that exited normally must have sent
// exactly one report: anything else means a process of the run wrote to
// its pipe (possible only when the caller disabled layers), and the
// status is not trusted. Every writer has exited by now, so the read
// cannot block.
//
// initExited is false without a PID namespace or when the init process
// did not exit normally; initCode is its exit code.
func scriptStatus(r io.Reader, initExited bool, initCode int) (*syscall.WaitStatus, error) {
	if !initExited {
		return nil, nil
	}
	msg, err := io.ReadAll(io.LimitReader(r, 64))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: reading the script's status: %v", ErrStart, err)
	case len(msg) == 0 && initCode != 0:
		return nil, nil // the init process failed before the script ran
	case len(msg) != stageconfig.ReaperReportLen || initCode != 0:
		return nil, fmt.Errorf("%w: the script's status from the init process is malformed (%d bytes, init process exit %d)", ErrStart, len(msg), initCode)
	}
	ws := stageconfig.ParseReaperReport(msg).Status
	return &ws, nil
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
