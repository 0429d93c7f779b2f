package native

import (
	"context"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// Launch is what one launch of a run changes as it goes; its plan,
// a backend.Spec, is what the planning decided and stays as it was. The
// platform part (launchOS) holds the processes, pipes and handles of the
// start.
type Launch struct {
	plan *backend.Spec
	// pool supplies pre-started init processes; nil without one.
	pool *Pool
	// cfg is the config the init process gets: the spec's, completed with
	// what the start found (the namespaces had, the relaxed RLIMIT_AS, the
	// proxy's descriptor, the cgroup).
	cfg stageconfig.Config
	// stdout and stderr capture the script's output streams (see
	// newWatchdog).
	stdout, stderr *backend.Capture
	// teardown, when set, runs once the sandbox is gone: the work
	// folder's removal. Removing the folder while the sandbox's mount
	// namespace is still being torn down would make the kernel unmount
	// the folder from it on the caller's path (about 1 ms). launch hands
	// it to posix.FinishLater (and clears it) when it returns before the
	// teardown; start calls it otherwise.
	teardown func()
	// reserved is the pooled init process whose host id the run has (see
	// Pool.reserve), until launch takes it; nil otherwise.
	reserved *Pooled
	// workMade says whether the work folder exists on the host: made by
	// the planning (see backend.Spec.HostWorkDir), or by launch when the run has no
	// mount namespace after all (see makeDeferredWorkDir).
	workMade bool
	// proxy is the allowlist proxy, when the plan has one.
	proxy proxyRun
	launchOS
}

// New returns the launch of p, before it starts: it takes its init
// process from pool when one there fits (nil for none), or reserved, the
// pooled init process whose host id p's run has (nil for none; see
// Pool.Reserve).
func New(p *backend.Spec, pool *Pool, reserved *Pooled) *Launch {
	return &Launch{plan: p, pool: pool, reserved: reserved, cfg: p.Config, workMade: p.HostWorkDir}
}

// Spec returns the plan l launches, which it does not change.
func (l *Launch) Spec() *backend.Spec { return l.plan }

// SetTeardown sets what runs once the sandbox is gone (see Teardown): the
// work folder's removal, the run id's release.
func (l *Launch) SetTeardown(f func()) { l.teardown = f }

// Run launches l's plan in the native sandbox (see launch) and fills out.
func (l *Launch) Run(ctx context.Context, out *backend.Outcome) error {
	return launch(ctx, l, out)
}

// RunGVisor launches l's plan under gVisor's runsc (see launchGVisor)
// and fills out.
func (l *Launch) RunGVisor(ctx context.Context, out *backend.Outcome) error {
	return launchGVisor(ctx, l, out)
}

// Teardown runs the teardown set unless a launch handed it to
// the background teardown (posix.FinishLater), which runs it once the
// sandbox is gone; it runs once at most.
func (l *Launch) Teardown() {
	if t := l.teardown; t != nil {
		l.teardown = nil
		t()
	}
}

// TakeReserved returns the reserved init process the launch has not
// taken, which is then no longer the launch's, or nil.
func (l *Launch) TakeReserved() *Pooled {
	pi := l.reserved
	l.reserved = nil
	return pi
}

// newWatchdog returns the watchdog of a launch, and makes the captures
// of its output streams: a stream past MaxOutput ends the run.
func newWatchdog(l *Launch) *backend.Watchdog {
	w := backend.NewWatchdog()
	l.stdout, l.stderr = backend.NewCaptures(l.plan.Output, w)
	return w
}

// collectOutput sets the captured streams, and which one passed
// MaxOutput, in out.
func (l *Launch) collectOutput(out *backend.Outcome) {
	backend.CollectOutput(l.stdout, l.stderr, out)
}
