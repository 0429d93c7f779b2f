//go:build !linux && !darwin && !windows

package run

import (
	"context"
	"fmt"
	"runtime"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// ExecInitIfRequested does nothing on this platform: there is no init process.
func ExecInitIfRequested() {}

// launch refuses: this platform has no sandbox implementation.
func launch(context.Context, *launchState, *backend.Outcome) error {
	return fmt.Errorf("%w: running skills is not implemented on %s (Linux and macOS are)", ErrUnsupported, runtime.GOOS)
}

// sandboxIdentity has no meaning here.
func sandboxIdentity() (int, int) { return -1, -1 }

// checkReachable has nothing to check here.
func checkReachable(int, int, string, string, string) error { return nil }

// writableFolder leaves a missing write folder to the mkdir of the run
// here.
func writableFolder(string) error { return nil }

// launchOS: this platform starts nothing.
type launchOS struct{}
