//go:build linux || darwin

package posix

import (
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// OutputGrace bounds how long Run waits for the output pipes to drain after
// the sandbox is gone; only a process that escaped the kill could hold them.
const OutputGrace = 2 * time.Second

// WaitOutput waits for both output copies to reach EOF; if something still
// holds the pipes after OutputGrace, it closes them.
func WaitOutput(copies *sync.WaitGroup, pipes ...*os.File) {
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(OutputGrace):
		for _, f := range pipes {
			f.Close()
		}
		<-drained
	}
}

// ScriptStatus reads the script's wait status from the init process's
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
func ScriptStatus(r io.Reader, initExited bool, initCode int) (*syscall.WaitStatus, error) {
	if !initExited {
		return nil, nil
	}
	msg, err := io.ReadAll(io.LimitReader(r, 64))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: reading the script's status: %v", backend.ErrStart, err)
	case len(msg) == 0 && initCode != 0:
		return nil, nil // the init process failed before the script ran
	case len(msg) != stageconfig.ReaperReportLen || initCode != 0:
		return nil, fmt.Errorf("%w: the script's status from the init process is malformed (%d bytes, init process exit %d)", backend.ErrStart, len(msg), initCode)
	}
	ws := stageconfig.ParseReaperReport(msg).Status
	return &ws, nil
}
