//go:build linux || darwin

package posix

import (
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
)

// ReapGrace bounds how long a timed-out or canceled run waits for the
// init process to kill and reap the PID namespace before it is killed.
const ReapGrace = 500 * time.Millisecond

// FinishLater ends a run whose init process proc has reported, and so
// exits: it removes the cgroup cg, reaps the init process (killing it if
// it has not exited after ReapGrace), runs after (the launch's teardown,
// the work folder's removal; may be nil) and finishes done (see
// backend.Cleanup). Where the init process moved itself out of the
// cgroup before its report (see stageconfig.HomeTasksFD), the cgroup goes
// at once, while the init process exits; otherwise once it has exited,
// which tears its namespaces down first. Run does not wait for this: the
// result is complete once the init process has reported (see
// run.Result.WaitCleanup). It is one goroutine, so that a caller that
// waits (the CLI) is woken once, not through a chain of them.
func FinishLater(proc *Process, cg *cgroup.Cgroup, after func(), done *backend.Cleanup) {
	early := cg != nil && cg.RemoveEmpty()
	kill := time.AfterFunc(ReapGrace, func() { KillAll(proc, true) })
	proc.Wait()
	kill.Stop()
	if !early {
		cg.Close()
	}
	if after != nil {
		after()
	}
	done.Finish(early)
}
