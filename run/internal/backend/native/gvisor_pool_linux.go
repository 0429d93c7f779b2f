package native

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/gvisor"
)

// gvisorPool keeps gVisor sandboxes started ahead of the gvisor runs
// of a Pool (see gvisor.Prestarted), each for one run. A sandbox's
// mounts, identity and cgroup are fixed when it starts, so the pool
// starts them of the shape (gvisor.Key) of the last two gvisor runs
// when both found none of theirs and had the same: those start their
// own sandboxes and teach the pool the shape; the runs of that shape
// after them take one. Two runs in a row of another shape make the pool
// discard its sandboxes and start new ones of that shape; a shape no two
// runs in a row share is never started.
type gvisorPool struct {
	pl *Pool // its counters' lock, size, maxIdle and done

	// Under pl.mu:
	stats Stats
	key   string // the shape of the sandboxes; "" until runs taught it
	// lastMiss is the shape of the last run that found none of its own.
	lastMiss string
	like     *backend.Spec // a run of that shape (its stdin dropped)
	rt       *gvisor.Runtime
	idle     []*gvisor.Prestarted // oldest first, all of shape key
	failed   bool                 // the last start failed: wait for the next take
	wake     chan struct{}
	// slotFrom is like's slot (gvisor.SlotKey) when key is a slot
	// shape: each sandbox is started with a slot folder of its own
	// (newSlot) and serves only the run that reserved it; "" otherwise.
	slotFrom string
	// slotParent and newSlot are SetSlots's; reserved are the sandboxes
	// ReserveSlot handed out, by slot, until a run takes them.
	slotParent string
	newSlot    func() (string, error)
	reserved   map[string]*gvisor.Prestarted
	// closing counts the sandboxes being closed in the background; Add
	// under pl.mu while the pool is open, or in the filler, so close
	// can wait for them.
	closing sync.WaitGroup
}

// newGVisorPool is the gvisor part of pl, whose filler it runs.
func newGVisorPool(pl *Pool) *gvisorPool {
	g := &gvisorPool{pl: pl, wake: make(chan struct{}, 1)}
	pl.wg.Add(1)
	go g.fill()
	return g
}

// GVisorStats returns the counters of the pool's gVisor sandboxes:
// started, taken by a run, missed (a gvisor run found none of its
// shape), expired and died.
func (pl *Pool) GVisorStats() Stats {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.gv.stats
}

// take returns a live waiting sandbox for p's run, or nil (a miss): then
// the pool learns p's shape, if it is one a sandbox can have, and starts
// sandboxes of it in the background. A run whose write grant is a slot
// (SetSlots) takes only the sandbox it reserved with it.
func (g *gvisorPool) take(p *backend.Spec, rt *gvisor.Runtime) *gvisor.Prestarted {
	g.pl.mu.Lock()
	parent := g.slotParent
	g.pl.mu.Unlock()
	// The key reads the host's files (/etc, the masks): outside the lock.
	slot := slotOf(p, parent)
	key := gvisor.Key(p)
	if slot != "" {
		key = gvisor.SlotKey(p, slot)
	}
	g.pl.mu.Lock()
	defer g.pl.mu.Unlock()
	g.failed = false
	defer g.signal()
	if s := g.reserved[slot]; s != nil && slot != "" {
		delete(g.reserved, slot)
		if key != "" && key == g.key && g.usable(s) {
			g.stats.Taken++
			return s
		}
		g.drop(s)
	}
	if g.pl.closed || key == "" {
		g.stats.Missed++
		return nil
	}
	if key != g.key {
		g.stats.Missed++
		if key != g.lastMiss {
			// Once is no pattern: a shape no two runs in a row share
			// is never started.
			g.lastMiss = key
			return nil
		}
		g.discard(g.idle...)
		g.idle = nil
		like := *p
		like.Stdin = nil
		g.key, g.like, g.rt, g.lastMiss, g.slotFrom = key, &like, rt, "", slot
		return nil
	}
	if g.slotFrom != "" {
		// The waiting sandboxes bind slots of their own, none this
		// run's: they are for the runs that reserve them.
		g.stats.Missed++
		return nil
	}
	if s := g.pop(); s != nil {
		g.stats.Taken++
		return s
	}
	g.stats.Missed++
	return nil
}

// usable reports whether s, taken out of idle or reserved, may serve a
// run: it is alive and not past maxIdle; it counts one that is not.
// pl.mu is held.
func (g *gvisorPool) usable(s *gvisor.Prestarted) bool {
	switch {
	case !s.Alive():
		g.stats.Died++
	case time.Since(s.Born) >= g.pl.maxIdle:
		g.stats.Expired++
	default:
		return true
	}
	return false
}

// pop returns the oldest usable waiting sandbox, or nil; the unusable
// ones before it are discarded. pl.mu is held.
func (g *gvisorPool) pop() *gvisor.Prestarted {
	for len(g.idle) > 0 {
		s := g.idle[0]
		g.idle = g.idle[1:]
		if g.usable(s) {
			return s
		}
		g.discard(s)
	}
	return nil
}

// discard closes waiting sandboxes in the background, and removes
// their slot folders, which no run was given; pl.mu is held, or the
// filler calls it.
func (g *gvisorPool) discard(ss ...*gvisor.Prestarted) {
	for _, s := range ss {
		g.closing.Add(1)
		go func() {
			defer g.closing.Done()
			s.Close()
			if s.Slot != "" {
				os.RemoveAll(s.Slot)
			}
		}()
	}
}

// drop closes a reserved sandbox in the background, keeping its slot
// folder: the execution that reserved it has its files there, and runs
// on it without the sandbox. pl.mu is held.
func (g *gvisorPool) drop(s *gvisor.Prestarted) {
	g.closing.Add(1)
	go func() {
		defer g.closing.Done()
		s.Close()
	}()
}

// signal wakes the filler.
func (g *gvisorPool) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// fill keeps pl.size sandboxes of the learnt shape waiting, replaces
// those past maxIdle, and closes the waiting ones when the pool closes.
func (g *gvisorPool) fill() {
	defer g.pl.wg.Done()
	timer := time.NewTimer(g.pl.maxIdle)
	defer timer.Stop()
	for {
		g.expire()
		g.pl.mu.Lock()
		want := g.like != nil && !g.failed && len(g.idle) < g.pl.size
		like, key, rt, from, newSlot := g.like, g.key, g.rt, g.slotFrom, g.newSlot
		g.pl.mu.Unlock()
		if want {
			select {
			case <-g.pl.done:
				g.close()
				return
			default:
			}
			g.startOne(like, key, rt, from, newSlot)
			continue
		}
		timer.Reset(g.pl.maxIdle / 2)
		select {
		case <-g.pl.done:
			g.close()
			return
		case <-g.wake:
		case <-timer.C:
		}
	}
}

// startOne starts a sandbox of like's shape and adds it to idle, unless
// the shape changed or the pool closed meanwhile: with a slot folder of
// its own (newSlot) when from, like's slot, is not "".
func (g *gvisorPool) startOne(like *backend.Spec, key string, rt *gvisor.Runtime, from string, newSlot func() (string, error)) {
	s, err := g.prestart(like, rt, from, newSlot)
	g.pl.mu.Lock()
	defer g.pl.mu.Unlock()
	switch {
	case err != nil:
		g.failed = true
	case g.pl.closed || key != g.key:
		g.discard(s)
	default:
		g.stats.Started++
		g.idle = append(g.idle, s)
	}
}

// prestart starts a sandbox of like's shape, with a new slot folder
// when from is not "" (removed again if the sandbox does not start).
func (g *gvisorPool) prestart(like *backend.Spec, rt *gvisor.Runtime, from string, newSlot func() (string, error)) (*gvisor.Prestarted, error) {
	if from == "" {
		return rt.Prestart(like)
	}
	if newSlot == nil {
		return nil, errors.New("no slot folders")
	}
	slot, err := newSlot()
	if err != nil {
		return nil, err
	}
	if filepath.Dir(slot) != filepath.Dir(from) {
		os.RemoveAll(slot)
		return nil, errors.New("a slot folder outside the slots' folder")
	}
	s, err := rt.PrestartSlot(like, from, slot)
	if err != nil {
		os.RemoveAll(slot)
	}
	return s, err
}

// expire closes the sandboxes that waited longer than maxIdle, the
// reserved ones too (their runs start their own).
func (g *gvisorPool) expire() {
	g.pl.mu.Lock()
	defer g.pl.mu.Unlock()
	for len(g.idle) > 0 && time.Since(g.idle[0].Born) >= g.pl.maxIdle {
		g.discard(g.idle[0])
		g.idle = g.idle[1:]
		g.stats.Expired++
	}
	for slot, s := range g.reserved {
		if time.Since(s.Born) >= g.pl.maxIdle {
			delete(g.reserved, slot)
			g.drop(s)
			g.stats.Expired++
		}
	}
}

// close closes the waiting sandboxes and waits until they and those
// closed in the background are gone; the pool is closed.
func (g *gvisorPool) close() {
	g.pl.mu.Lock()
	g.discard(g.idle...)
	for slot, s := range g.reserved {
		delete(g.reserved, slot)
		g.drop(s)
	}
	g.idle, g.like = nil, nil
	g.pl.mu.Unlock()
	g.closing.Wait()
}

// closeAfter closes s, a sandbox a run used, in the background, and
// returns the teardown the run's Result waits for; the pool's Close
// waits for it too.
func (g *gvisorPool) closeAfter(s *gvisor.Prestarted) *backend.Cleanup {
	c := backend.NewCleanup()
	g.pl.mu.Lock()
	defer g.pl.mu.Unlock()
	if g.pl.closed {
		// close may be waiting already: too late to join it.
		s.Close()
		c.Finish(false)
		return c
	}
	g.closing.Add(1)
	go func() {
		defer g.closing.Done()
		s.Close()
		c.Finish(false)
	}()
	return c
}

// runPooledGVisor runs p in a sandbox of l's pool when one fits; ok is
// false when none did and nothing of the run started. started is the
// watch's start, as for an unpooled run (gvisor.Prestarted.Run). The
// sandbox's teardown goes on in the background (out.Cleanup).
func runPooledGVisor(ctx context.Context, l *Launch, p *backend.Spec, rt *gvisor.Runtime, wd *backend.Watchdog, started func(int, string), out *backend.Outcome) (o *gvisor.Outcome, ok bool, err error) {
	if l.pool == nil || l.pool.gv == nil {
		return nil, false, nil
	}
	g := l.pool.gv
	s := g.take(p, rt)
	if s == nil {
		return nil, false, nil
	}
	o, err = s.Run(ctx, p, l.stdout, l.stderr, wd, started)
	if errors.Is(err, gvisor.ErrPoolMismatch) {
		// A folder it binds was replaced since it started: not taken
		// after all, but expired.
		g.pl.mu.Lock()
		g.stats.Taken--
		g.stats.Missed++
		g.stats.Expired++
		g.pl.mu.Unlock()
		s.Close()
		return nil, false, nil
	}
	out.Cleanup = g.closeAfter(s)
	return o, true, err
}
