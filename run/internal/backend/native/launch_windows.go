package native

import (
	"context"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/winjob"
)

// A Windows run is run/internal/backend/winjob's: the script in a Job
// Object, no init process. None of it has run here: see
// docs/platforms.md.

// launchOS: a Windows launch keeps its state in winjob.
type launchOS struct{}

// launch runs l's plan in its Job Object (see winjob.Launch).
func launch(ctx context.Context, l *Launch, out *backend.Outcome) error {
	return winjob.Launch(ctx, l.plan, out)
}
