//go:build linux || darwin

package run

import (
	"io"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// readStatusReport waits for the init process's report of the script's
// status and for the end of the pipe, which the init process closes right
// after writing it, once every other process of the run is gone. It
// returns what it read and whether that is exactly one report. A process
// of the run that could write to the pipe (possible only when the caller
// disabled layers) wrote before the init process's report, as it was dead
// by then, so a forged report makes the pipe hold more than one and is
// not trusted; it cannot end the read early either. When the init process
// is killed first (timeout, cancellation past reapGrace), the pipe ends
// before a report.
func readStatusReport(r io.Reader) ([]byte, bool) {
	msg, err := io.ReadAll(io.LimitReader(r, 2*stageconfig.ReaperReportLen))
	return msg, err == nil && len(msg) == stageconfig.ReaperReportLen
}

// finishLater ends a run whose init process has reported, and so exits: it
// removes the cgroup, reaps the init process (killing it if it has not
// exited after reapGrace), runs after (see launchState.teardown) and
// closes res.cleanup. Where the init process moved itself out of the cgroup before its
// report (see stageconfig.HomeTasksFD), the cgroup goes at once, while
// the init process exits; otherwise once it has exited, which tears its
// namespaces down first. Run does not wait for this: the result is
// complete once the init process has reported (see Result.WaitCleanup). It is
// one goroutine, so that a caller that waits (the CLI) is woken once, not
// through a chain of them.
func finishLater(proc *initProcess, cg *cgroup.Cgroup, after func(), res *Result) {
	early := cg != nil && cg.RemoveEmpty()
	res.cgroupBeforeExit = early
	kill := time.AfterFunc(reapGrace, func() { killSandbox(proc, true) })
	proc.Wait()
	kill.Stop()
	if !early {
		cg.Close()
	}
	if after != nil {
		after()
	}
	close(res.cleanup)
}
