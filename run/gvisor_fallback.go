package run

import (
	"context"
	"errors"
)

// launchOrFallBack launches l's gVisor plan and, when gVisor is not
// available here (see gvisorUnavailable) and the script did not start,
// launches it under the native backend instead, saying why in
// res.BackendFallback. It is the launch of a plan with GVisorFallback.
func launchOrFallBack(ctx context.Context, l *launchState, res *Result) error {
	err := launchGVisor(ctx, l, res)
	if err == nil || res.Started || ctx.Err() != nil || !gvisorUnavailable(l, err) {
		return err
	}
	// The native launch starts from a clean result: nothing of the
	// failed start stays in it but the reason.
	res.Backend, res.BackendVersion, res.BackendFallback = BackendNative, "", "gvisor: "+err.Error()
	res.Applied, res.Missing = nil, nil
	return launch(ctx, l, res)
}

// errorsIsStart reports whether err says the sandbox could not be
// started or is not supported here.
func errorsIsStart(err error) bool {
	return errors.Is(err, ErrUnsupported) || errors.Is(err, ErrStart)
}
