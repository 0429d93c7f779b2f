//go:build !linux

package native

import (
	"context"
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// launchGVisor refuses: gVisor runs on Linux only.
func launchGVisor(context.Context, *Launch, *backend.Outcome) error {
	return fmt.Errorf("%w: the gvisor backend runs on Linux only", backend.ErrUnsupported)
}

// gvisorUnavailable reports whether err, from launchGVisor, says gVisor
// is not available here: it never is off Linux.
func gvisorUnavailable(l *Launch, err error) bool {
	return errorsIsStart(err)
}
