//go:build !linux && !darwin && !windows

package native

import (
	"context"
	"fmt"
	"runtime"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// launch refuses: this platform has no sandbox implementation.
func launch(context.Context, *Launch, *backend.Outcome) error {
	return fmt.Errorf("%w: running skills is not implemented on %s (Linux and macOS are)", backend.ErrUnsupported, runtime.GOOS)
}

// launchOS: this platform starts nothing.
type launchOS struct{}
