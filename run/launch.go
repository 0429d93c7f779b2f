package run

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// launchState is what one launch of a plan changes as it goes; the plan
// itself is what prepare decided and stays as it was. The platform part
// (launchOS) holds the processes, pipes and handles of the start.
type launchState struct {
	plan *plan
	// cfg is the config the init process gets: the plan's, completed with
	// what the start found (the namespaces had, the relaxed RLIMIT_AS, the
	// proxy's descriptor, the cgroup).
	cfg stageconfig.Config
	// stdout and stderr capture the script's output streams.
	stdout, stderr *capture
	// teardown, when set, runs once the sandbox is gone: the work
	// folder's removal. Removing the folder while the sandbox's mount
	// namespace is still being torn down would make the kernel unmount
	// the folder from it on the caller's path (about 1 ms). launch hands
	// it to finishLater (and clears it) when it returns before the
	// teardown; start calls it otherwise.
	teardown func()
	// reserved is the pooled init process whose host id the run has (see
	// Pool.reserve), until launch takes it; nil otherwise.
	reserved *pooledInit
	// workMade says whether the work folder exists on the host: made by
	// prepare (see plan.hostWorkDir), or by launch when the run has no
	// mount namespace after all (see makeDeferredWorkDir).
	workMade bool
	// proxy is the allowlist proxy, when the plan has one.
	proxy proxyRun
	launchOS
}

// newLaunchState returns the state of a launch of p, before it starts.
func newLaunchState(p *plan) *launchState {
	l := &launchState{plan: p, cfg: p.cfg, workMade: p.hostWorkDir}
	l.stdout = newCapture(p.output.stdout, p.output.capBytes)
	l.stderr = newCapture(p.output.stderr, p.output.capBytes)
	l.stdout.maxStream, l.stderr.maxStream = p.output.maxStream, p.output.maxStream
	return l
}

// Reasons a run ended, set by the watchdog, or endExited by the launch
// once the run's processes are gone.
const (
	endNormal int32 = iota
	endTimeout
	endCanceled
	endExited // the init process or script exited by itself first
	endOutput // a stream passed Sandbox.MaxOutput
	endLimit  // the watch found a cap passed (Result.LimitExceeded)
)

// watchdog ends a run, at any point once it is started, on its time
// limit, its context's cancellation, an output stream past MaxOutput or a
// cap the watch found passed (exceeded), by calling stop once.
type watchdog struct {
	ended    atomic.Int32 // one of the end* reasons
	limit    atomic.Pointer[string]
	tooMuch  chan struct{}
	tooOnce  sync.Once
	overCap  chan string
	done     chan struct{}
	finished sync.WaitGroup
}

// newWatchdog returns the watchdog of a launch whose output streams are l's.
func newWatchdog(l *launchState) *watchdog {
	w := &watchdog{tooMuch: make(chan struct{}), overCap: make(chan string, 1), done: make(chan struct{})}
	l.stdout.onExceed = func() { w.tooOnce.Do(func() { close(w.tooMuch) }) }
	l.stderr.onExceed = l.stdout.onExceed
	return w
}

// exceeded reports a cap the watch found passed (a Limit* value).
func (w *watchdog) exceeded(what string) { w.overCap <- what }

// start watches until finish; stop ends the run. stop runs on the
// watchdog's goroutine, which finish waits for.
func (w *watchdog) start(ctx context.Context, timeout time.Duration, stop func()) {
	w.finished.Add(1)
	go func() {
		defer w.finished.Done()
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		reason := endNormal
		select {
		case <-w.done:
			return
		case <-timer.C:
			reason = endTimeout
		case <-ctx.Done():
			reason = endCanceled
		case <-w.tooMuch:
			reason = endOutput
		case what := <-w.overCap:
			w.limit.Store(&what)
			reason = endLimit
		}
		if w.ended.CompareAndSwap(endNormal, reason) {
			stop()
		}
	}()
}

// finish marks the run's processes gone (endExited, unless the watchdog
// ended the run first), and returns once the watchdog has stopped.
func (w *watchdog) finish() {
	w.ended.CompareAndSwap(endNormal, endExited)
	close(w.done)
	w.finished.Wait()
}

// stopped reports whether the watchdog ended the run.
func (w *watchdog) stopped() bool {
	e := w.ended.Load()
	return e != endNormal && e != endExited
}

// record sets why the watchdog ended the run in res.
func (w *watchdog) record(res *Result) {
	switch w.ended.Load() {
	case endTimeout:
		res.TimedOut = true
	case endCanceled:
		res.Canceled = true
	case endLimit:
		res.LimitExceeded = *w.limit.Load()
	}
}

// collectOutput sets the captured streams, and which one passed
// MaxOutput, in res.
func (l *launchState) collectOutput(res *Result) {
	res.Stdout, res.Stderr = l.stdout.output(), l.stderr.output()
	switch {
	case l.stdout.exceeded:
		res.OutputExceeded = "stdout"
	case l.stderr.exceeded:
		res.OutputExceeded = "stderr"
	}
}
