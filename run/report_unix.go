//go:build linux || darwin

package run

import (
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
)

// finishLater ends a run whose init process has reported, and so exits: it
// removes the cgroup, reaps the init process (killing it if it has not
// exited after reapGrace), runs after (see launchState.teardown) and
// finishes done (see backend.Cleanup). Where the init process moved
// itself out of the cgroup before its report (see stageconfig.HomeTasksFD), the cgroup goes at once, while
// the init process exits; otherwise once it has exited, which tears its
// namespaces down first. Run does not wait for this: the result is
// complete once the init process has reported (see Result.WaitCleanup). It is
// one goroutine, so that a caller that waits (the CLI) is woken once, not
// through a chain of them.
func finishLater(proc *posix.Process, cg *cgroup.Cgroup, after func(), done *backend.Cleanup) {
	early := cg != nil && cg.RemoveEmpty()
	kill := time.AfterFunc(reapGrace, func() { posix.KillAll(proc, true) })
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
