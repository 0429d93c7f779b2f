package run

import (
	"context"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/winjob"
)

// A Windows run is run/internal/backend/winjob's: the script in a Job
// Object, no init process. None of it has run here: see
// docs/platforms.md.

// ExecInitIfRequested does nothing on Windows: there is no init process.
func ExecInitIfRequested() {}

// sandboxIdentity: the script runs as the caller; there are no uids.
func sandboxIdentity() (int, int) { return -1, -1 }

// checkReachable has nothing to check: the script runs as the caller.
func checkReachable(int, int, string, string, string) error { return nil }

// writableFolder leaves a missing write folder to the mkdir of the run
// here.
func writableFolder(string) error { return nil }

// launchOS: a Windows launch keeps its state in winjob.
type launchOS struct{}

// launch runs l's plan in its Job Object (see winjob.Launch).
func launch(ctx context.Context, l *launchState, out *backend.Outcome) error {
	return winjob.Launch(ctx, l.plan, out)
}
