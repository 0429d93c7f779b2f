package run

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// DefaultPoolMaxIdle is how long a pre-started init process may wait for a
// run when NewPool is given no limit. Past it the init process is killed and
// replaced, so that none outlives what the supervisor knew when it started
// it (the host's mounts and identities) by long.
const DefaultPoolMaxIdle = 30 * time.Second

// Pool keeps a few init processes started ahead of the runs that will use
// them, for long-lived callers such as the MCP server: each is already
// cloned into its namespaces (user, PID, mount, IPC, UTS and, unless the
// network is allowed, network), has its uid and gid maps written and its Go
// runtime started, has built what every run of the pool shares (the new
// root with the system folders, /etc, /dev, /proc and /dev/shm, the
// loopback up, the Landlock ruleset with the rules on those, the seccomp
// filter), and waits for its config; the run's own parts (skill and work
// folders, grants, masks, /tmp) are added when it comes. What the init
// process shows of /etc is therefore the host's as of the init process's
// start, at most maxIdle old. A run whose namespaces and identity match
// takes one (see Sandbox.Pool), hands it its descriptors (stdin, the
// handed-over trees, the proxy socket) and its config, and the pool starts
// a replacement in the background: once that run is done, or at once when
// it took the last init process waiting. The run then goes on exactly as
// with an init process of its own: the cgroup is joined before the config
// is sent, and every layer is applied from the config, on what was built
// ahead where the config agrees with it (an init process whose build does
// not fit the run discards it and builds the root afresh).
//
// Each init process serves one run at most and is never reused; nothing of
// a run reaches another (every init process has its own pipes and
// namespaces). An init process that has waited longer than its maximum, or
// that died, is killed and replaced, not used. Close kills the waiting init
// processes; runs already under way are not affected. A Pool is safe for
// concurrent use.
//
// Only Linux has pools; elsewhere a Pool never holds an init process and
// every run starts its own.
type Pool struct {
	size    int
	maxIdle time.Duration
	shape   poolShape

	mu       sync.Mutex
	idle     []*pooledInit // oldest first
	closed   bool
	disabled error // set when init processes cannot be started here; no more tries
	failed   error // the last start failure; filling waits for the next take
	stats    PoolStats

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

// PoolStats counts what a Pool did since NewPool.
type PoolStats struct {
	Started int // init processes started
	Taken   int // init processes handed to a run
	Missed  int // runs that found no fitting init process and started their own
	Expired int // init processes killed after waiting longer than the maximum
	Died    int // init processes found dead when taken, and discarded
	// Prebuilt counts the runs whose root was the one their pooled init process
	// built ahead; a run whose configuration the build does not fit has
	// its root built afresh, and is not counted.
	Prebuilt int
}

// poolShape is what a run must share with a pooled init process to use it: the
// namespaces it was cloned into and the identity its uid 0 maps to.
type poolShape struct {
	wantNS   []Layer
	uid, gid int
	// ownIDs: each init process gets a host id of its own when it starts (see
	// identity.Take), which uid and gid then are, and so does the run that
	// reserves it (see reserve).
	ownIDs bool
	cgroup bool    // runs have a cgroup (it is not disabled)
	cpus   float64 // their cgroup's CPU limit (Sandbox.CPUs)
	// allowNetwork is like's AllowNetwork: the init processes build their
	// root's /etc for it ahead (a run that differs has its root built
	// afresh).
	allowNetwork bool
}

// NewPool starts size init processes fitting runs of like (its AllowNetwork
// and Disable decide the namespaces, Disable and CPUs the cgroup) and keeps that many waiting until
// Close. maxIdle bounds how long one waits (DefaultPoolMaxIdle when zero).
// like is not kept.
func NewPool(size int, maxIdle time.Duration, like Sandbox) (*Pool, error) {
	return newPool(size, maxIdle, like, nil)
}

// newPool is NewPool with trace set before the filler starts.
func newPool(size int, maxIdle time.Duration, like Sandbox, trace func(event string)) (*Pool, error) {
	if size < 0 || maxIdle < 0 {
		return nil, fmt.Errorf("%w: negative pool size or idle time", ErrBadConfig)
	}
	if maxIdle == 0 {
		maxIdle = DefaultPoolMaxIdle
	}
	uid, gid := sandboxIdentity()
	shape := poolShape{uid: uid, gid: gid, ownIDs: uid == nobodyUID && identity.OwnRunIDs(), cgroup: !stageconfig.Has(like.Disable, LayerCgroup), cpus: like.CPUs, allowNetwork: like.AllowNetwork}
	shape.wantNS = enabled(backend.NamespaceLayers(like.AllowNetwork), like.Disable)
	pl := &Pool{size: size, maxIdle: maxIdle, shape: shape,
		wake: make(chan struct{}, 1), done: make(chan struct{}), trace: trace}
	if !stageconfig.Has(shape.wantNS, LayerUserNS) {
		// Without a user namespace an init process starts as the fallback,
		// which is decided per run (see startInit): not pooled.
		pl.disabled = errors.New("no user namespace")
	}
	pl.wg.Add(1)
	go pl.fill()
	return pl, nil
}

// Stats returns the pool's counters.
func (pl *Pool) Stats() PoolStats {
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
func (pl *Pool) get(p *backend.Spec) *pooledInit {
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

// reserve returns a live waiting init process for a run of s whose host id
// is the init process's own (see poolShape.ownIDs), or nil (counted as a
// miss): the run learns its id from it before anything of the run is made,
// and launch takes it (see take). The checks that need the run's plan come
// then.
func (pl *Pool) reserve(s *Sandbox) *pooledInit {
	if pl == nil {
		return nil
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.failed = nil
	if pl.closed || !pl.shape.ownIDs || !pl.fitsShape(enabled(backend.NamespaceLayers(s.AllowNetwork), s.Disable), s.Disable, s.CPUs) {
		pl.stats.Missed++
		pl.signal()
		return nil
	}
	return pl.pop()
}

// pop hands out the oldest live waiting init process, or nil (a miss); pl.mu is
// held.
func (pl *Pool) pop() *pooledInit {
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

// discard kills an init process that was taken but could not be used (it died
// after the liveness check, or its cgroup refused the run's limits); the
// run starts its own instead.
func (pl *Pool) discard(pi *pooledInit) {
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
	return !pl.shape.ownIDs && p.UID == pl.shape.uid && p.GID == pl.shape.gid &&
		canHandOver(p) && pl.fitsShape(p.Namespaces, p.Disabled, p.Cgroup.CPUs)
}

// fitsShape reports whether a run with these namespaces, disabled layers
// and CPU limit can use an init process of the pool, whatever its identity.
func (pl *Pool) fitsShape(wantNS, disabled []Layer, cpus float64) bool {
	return pl.disabled == nil && slices.Equal(wantNS, pl.shape.wantNS) &&
		stageconfig.Has(disabled, LayerCgroup) == !pl.shape.cgroup && cpus == pl.shape.cpus
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
	var old []*pooledInit
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
