//go:build !linux

package run

import (
	"context"
	"fmt"
)

// launchGVisor refuses: gVisor runs on Linux only.
func launchGVisor(ctx context.Context, l *launchState, res *Result) error {
	res.Backend = BackendGVisor
	return fmt.Errorf("%w: the gvisor backend runs on Linux only", ErrUnsupported)
}

// gvisorUnavailable reports whether err, from launchGVisor, says gVisor
// is not available here: it never is off Linux.
func gvisorUnavailable(l *launchState, err error) bool {
	return errorsIsStart(err)
}
