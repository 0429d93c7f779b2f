package native

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// Pool keeps init processes started ahead of the runs that will use
// them: run.Pool's implementation, whose doc says what it promises. It
// starts size init processes of one Shape, hands each to one run at
// most, and replaces those taken, dead or past maxIdle.
type Pool struct {
	size    int
	maxIdle time.Duration
	shape   Shape

	mu       sync.Mutex
	idle     []*Pooled // oldest first
	closed   bool
	disabled error // set when init processes cannot be started here; no more tries
	failed   error // the last start failure; filling waits for the next take
	stats    Stats

	gv *gvisorPool // the gvisor runs' sandboxes; nil where there are none

	wake chan struct{} // capacity 1: the filler should look again
	done chan struct{} // closed by Close
	wg   sync.WaitGroup

	// trace, when not nil, is told under mu of each step that decides when
	// init processes start, in the order they happen: "taken" (get hands an
	// init process to a run), "refill" (that run is done), "wake" (the
	// filler is signalled), "start" (the filler starts an init process),
	// "asleep" (it waits with nothing to start). Tests set it (newPool) to
	// check the order, which no wait of theirs could show: a replacement
	// started too early may show up only after any chosen wait.
	trace func(event string)
}

// Stats counts what a Pool did since NewPool (run.PoolStats).
type Stats struct {
	Started  int // init processes started
	Taken    int // init processes handed to a run
	Missed   int // runs that found no fitting init process and started their own
	Expired  int // init processes killed after waiting longer than the maximum
	Died     int // init processes found dead when taken, and discarded
	Prebuilt int // runs whose root was the one their pooled init process built ahead
}

// Shape is what a run must share with a pooled init process to use it: the
// namespaces it was cloned into and the identity its uid 0 maps to.
type Shape struct {
	WantNS   []stageconfig.Layer
	UID, GID int
	// ownIDs: each init process gets a host id of its own when it starts (see
	// identity.Take), which uid and gid then are, and so does the run that
	// reserves it (see reserve).
	OwnIDs bool
	Cgroup bool    // runs have a cgroup (it is not disabled)
	CPUs   float64 // their cgroup's CPU limit (Sandbox.CPUs)
	// AllowNetwork is the runs' AllowNetwork: the init processes build their
	// root's /etc for it ahead (a run that differs has its root built
	// afresh).
	AllowNetwork bool
}

// NewPool starts size init processes of shape and keeps that many
// waiting until Close; maxIdle (positive) bounds how long one waits.
// trace, when not nil, is told of each step (see Pool.trace).
func NewPool(size int, maxIdle time.Duration, shape Shape, trace func(event string)) *Pool {
	pl := &Pool{size: size, maxIdle: maxIdle, shape: shape,
		wake: make(chan struct{}, 1), done: make(chan struct{}), trace: trace}
	if !stageconfig.Has(shape.WantNS, stageconfig.LayerUserNS) {
		// Without a user namespace an init process starts as the fallback,
		// which is decided per run (see startInit): not pooled.
		pl.disabled = errors.New("no user namespace")
	}
	pl.wg.Add(1)
	go pl.fill()
	pl.gv = newGVisorPool(pl)
	return pl
}

// Stats returns the pool's counters.
func (pl *Pool) Stats() Stats {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.stats
}

// Close kills the waiting init processes and waits until they are gone; the
// pool starts no more. Runs that already took an init process are not
// affected. Close may be called more than once.
func (pl *Pool) Close() error {
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		return nil
	}
	pl.closed = true
	close(pl.done)
	pl.mu.Unlock()
	pl.wg.Wait() // the filler has stopped: nothing is added to idle
	pl.mu.Lock()
	idle := pl.idle
	pl.idle = nil
	pl.mu.Unlock()
	for _, pi := range idle {
		pi.kill()
	}
	return nil
}

// get returns a live waiting init process that fits p, or nil (counted as a
// miss). Init processes found dead are discarded.
func (pl *Pool) get(p *backend.Spec) *Pooled {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.failed = nil // a take is a reason to try starting again
	if pl.closed || !pl.fits(p) {
		pl.stats.Missed++
		pl.signal()
		return nil
	}
	return pl.pop()
}

// Reserve returns a live waiting init process for a run with these
// namespaces, disabled layers and CPU limit whose host id is the init
// process's own (see Shape.OwnIDs), or nil (counted as a miss): the run
// learns its id from it (Pooled.TakeID) before anything of the run is
// made, and the launch takes it (see take). The checks that need the
// run's plan come then.
func (pl *Pool) Reserve(wantNS, disabled []stageconfig.Layer, cpus float64) *Pooled {
	if pl == nil {
		return nil
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.failed = nil
	if pl.closed || !pl.shape.OwnIDs || !pl.fitsShape(wantNS, disabled, cpus) {
		pl.stats.Missed++
		pl.signal()
		return nil
	}
	return pl.pop()
}

// pop hands out the oldest live waiting init process, or nil (a miss); pl.mu is
// held.
func (pl *Pool) pop() *Pooled {
	for len(pl.idle) > 0 {
		pi := pl.idle[0]
		pl.idle = pl.idle[1:]
		switch {
		case !pi.alive():
			pl.stats.Died++
		case time.Since(pi.born) >= pl.maxIdle:
			pl.stats.Expired++
		default:
			pl.stats.Taken++
			pl.traced("taken")
			if len(pl.idle) == 0 {
				// None left for a run that comes meanwhile: the
				// replacement starts now, not after this run (refill).
				pl.signal()
			}
			return pi
		}
		go pi.kill()
	}
	pl.stats.Missed++
	pl.signal()
	return nil
}

// countPrebuilt counts a run whose init process reported its root built ahead.
func (pl *Pool) countPrebuilt() {
	if pl != nil {
		pl.mu.Lock()
		pl.stats.Prebuilt++
		pl.mu.Unlock()
	}
}

// refill wakes the filler once a run that took an init process is done,
// when get left init processes waiting. Starting an init process (a fork of
// the supervisor, which user namespaces keep from being a vfork, then the
// init process's Go start and its build) competes with the run that took
// one for the CPUs and the supervisor's memory map; after the run it stays
// off the run's path. Measured with pooled runs of /bin/true 20 ms apart
// (load 8-17): 4.6-7.0 ms median with the replacement started during the
// run, 3.5-3.8 ms with it started 10 ms later.
func (pl *Pool) refill() {
	if pl != nil {
		pl.mu.Lock()
		pl.traced("refill")
		pl.signal()
		pl.mu.Unlock()
	}
}

// Discard kills an init process that was taken but could not be used (it died
// after the liveness check, or its cgroup refused the run's limits); the
// run starts its own instead.
func (pl *Pool) Discard(pi *Pooled) {
	pl.dropped(true)
	pi.kill()
}

// dropped counts an init process get handed out that was killed unused: not
// taken after all, but died; missed when its run starts its own instead.
// The filler is woken to replace it.
func (pl *Pool) dropped(missed bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.stats.Taken--
	pl.stats.Died++
	if missed {
		pl.stats.Missed++
	}
	pl.signal()
}

// fits reports whether p's run can use an init process of the pool.
// A pool whose init processes have ids of their own serves only the runs that
// reserved one (see reserve).
func (pl *Pool) fits(p *backend.Spec) bool {
	return !pl.shape.OwnIDs && p.UID == pl.shape.UID && p.GID == pl.shape.GID &&
		canHandOver(p) && pl.fitsShape(p.Namespaces, p.Disabled, p.Cgroup.CPUs)
}

// fitsShape reports whether a run with these namespaces, disabled layers
// and CPU limit can use an init process of the pool, whatever its identity.
func (pl *Pool) fitsShape(wantNS, disabled []stageconfig.Layer, cpus float64) bool {
	return pl.disabled == nil && slices.Equal(wantNS, pl.shape.WantNS) &&
		stageconfig.Has(disabled, stageconfig.LayerCgroup) == !pl.shape.Cgroup && cpus == pl.shape.CPUs
}

// signal wakes the filler; pl.mu is held.
func (pl *Pool) signal() {
	pl.traced("wake")
	select {
	case pl.wake <- struct{}{}:
	default:
	}
}

// fill keeps size init processes waiting and replaces those past maxIdle.
// After a failed start it waits for the next take rather than retry in a
// loop.
func (pl *Pool) fill() {
	defer pl.wg.Done()
	timer := time.NewTimer(pl.maxIdle)
	defer timer.Stop()
	for {
		pl.expire()
		pl.mu.Lock()
		want := !pl.closed && pl.disabled == nil && pl.failed == nil && len(pl.idle) < pl.size
		next := pl.maxIdle
		if len(pl.idle) > 0 {
			next = max(time.Until(pl.idle[0].born.Add(pl.maxIdle)), time.Millisecond)
		}
		if want {
			pl.traced("start")
		} else {
			pl.traced("asleep")
		}
		pl.mu.Unlock()
		if want {
			pl.startOne()
			continue
		}
		timer.Reset(next)
		select {
		case <-pl.done:
			return
		case <-pl.wake:
		case <-timer.C:
		}
	}
}

// startOne starts an init process and adds it to idle, unless the pool was
// closed meanwhile.
func (pl *Pool) startOne() {
	pi, err := startPooled(pl.shape)
	pl.mu.Lock()
	defer pl.mu.Unlock()
	switch {
	case errors.Is(err, errNoUserNS):
		pl.disabled = err
	case err != nil:
		pl.failed = err
	case pl.closed:
		go pi.kill()
	default:
		pl.stats.Started++
		pl.idle = append(pl.idle, pi)
	}
}

// traced tells trace of event; pl.mu is held.
func (pl *Pool) traced(event string) {
	if pl.trace != nil {
		pl.trace(event)
	}
}

// expire kills the init processes that waited longer than maxIdle.
func (pl *Pool) expire() {
	pl.mu.Lock()
	var old []*Pooled
	for len(pl.idle) > 0 && time.Since(pl.idle[0].born) >= pl.maxIdle {
		old = append(old, pl.idle[0])
		pl.idle = pl.idle[1:]
		pl.stats.Expired++
	}
	pl.mu.Unlock()
	for _, pi := range old {
		pi.kill()
	}
}

// errNoUserNS is startPooled's error when user namespaces cannot be
// created here: the pool stops trying.
var errNoUserNS = errors.New("user namespaces are not available")
