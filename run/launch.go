package run

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// launchState is what one launch of a run changes as it goes; its plan,
// a backend.Spec, is what prepare decided and stays as it was. The
// platform part (launchOS) holds the processes, pipes and handles of the
// start.
type launchState struct {
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
	reserved *pooledInit
	// workMade says whether the work folder exists on the host: made by
	// prepare (see backend.Spec.HostWorkDir), or by launch when the run has no
	// mount namespace after all (see makeDeferredWorkDir).
	workMade bool
	// proxy is the allowlist proxy, when the plan has one.
	proxy proxyRun
	launchOS
}

// newLaunchState returns the state of a launch of p, before it starts,
// taking its init process from pool when one there fits (nil for none).
func newLaunchState(p *backend.Spec, pool *Pool) *launchState {
	return &launchState{plan: p, pool: pool, cfg: p.Config, workMade: p.HostWorkDir}
}

// newWatchdog returns the watchdog of a launch, and makes the captures
// of its output streams: a stream past MaxOutput ends the run.
func newWatchdog(l *launchState) *backend.Watchdog {
	w := backend.NewWatchdog()
	l.stdout, l.stderr = backend.NewCaptures(l.plan.Output, w)
	return w
}

// collectOutput sets the captured streams, and which one passed
// MaxOutput, in out.
func (l *launchState) collectOutput(out *backend.Outcome) {
	backend.CollectOutput(l.stdout, l.stderr, out)
}
