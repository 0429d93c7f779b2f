package native

import (
	"context"
	"errors"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// RunGVisorOrNative launches l's gVisor plan and, when gVisor is not
// available here (see gvisorUnavailable) and the script did not start,
// launches it in the native sandbox instead, returning why as fellBack
// (empty when it did not). It is the launch of a plan with
// GVisorFallback; the outcome is the launch's that counts.
func (l *Launch) RunGVisorOrNative(ctx context.Context) (out *backend.Outcome, fellBack string, err error) {
	out = backend.NewOutcome()
	err = launchGVisor(ctx, l, out)
	if err == nil || out.Started || ctx.Err() != nil || !gvisorUnavailable(l, err) {
		return out, "", err
	}
	// The native launch starts from a clean outcome: nothing of the
	// failed start stays in it but the reason.
	out = backend.NewOutcome()
	return out, "gvisor: " + err.Error(), launch(ctx, l, out)
}

// errorsIsStart reports whether err says the sandbox could not be
// started or is not supported here.
func errorsIsStart(err error) bool {
	return errors.Is(err, backend.ErrUnsupported) || errors.Is(err, backend.ErrStart)
}
