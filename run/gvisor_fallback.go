package run

import (
	"context"
	"errors"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// launchOrFallBack launches l's gVisor plan and, when gVisor is not
// available here (see gvisorUnavailable) and the script did not start,
// launches it under the native backend instead, saying why in
// res.BackendFallback. It is the launch of a plan with GVisorFallback;
// the outcome is the launch's that counts.
func launchOrFallBack(ctx context.Context, l *launchState, res *Result) (*backend.Outcome, error) {
	out := backend.NewOutcome()
	err := launchGVisor(ctx, l, out)
	if err == nil || out.Started || ctx.Err() != nil || !gvisorUnavailable(l, err) {
		return out, err
	}
	// The native launch starts from a clean outcome: nothing of the
	// failed start stays in it but the reason.
	res.Backend, res.BackendFallback = BackendNative, "gvisor: "+err.Error()
	out = backend.NewOutcome()
	return out, launch(ctx, l, out)
}

// errorsIsStart reports whether err says the sandbox could not be
// started or is not supported here.
func errorsIsStart(err error) bool {
	return errors.Is(err, ErrUnsupported) || errors.Is(err, ErrStart)
}
