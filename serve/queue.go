package serve

import (
	"context"
	"sync"
)

// queue bounds the runs in progress (maxRun, and perTenant for each
// tenant) and the accepted runs waiting for a slot (maxWait). Waiting
// runs get slots in the order they were accepted, skipping those whose
// tenant is at its bound.
type queue struct {
	maxRun, maxWait, perTenant int

	mu       sync.Mutex
	inFlight int
	queued   int // admitted and not yet running
	perRun   map[string]int
	waiters  []*waiter
}

// waiter is one run waiting for a slot.
type waiter struct {
	tenant  string
	granted chan struct{}
}

func newQueue(maxRun, maxWait, perTenant int) *queue {
	return &queue{maxRun: maxRun, maxWait: maxWait, perTenant: perTenant, perRun: map[string]int{}}
}

// admit reserves a place for one run, in a slot or the queue; false means
// both are full.
func (q *queue) admit() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.inFlight+q.queued >= q.maxRun+q.maxWait {
		return false
	}
	q.queued++
	return true
}

// acquire waits for a run slot of tenant for a run admitted before; on
// ctx's end it gives the place up and returns ctx's error.
func (q *queue) acquire(ctx context.Context, tenant string) error {
	w := &waiter{tenant: tenant, granted: make(chan struct{})}
	q.mu.Lock()
	q.waiters = append(q.waiters, w)
	q.dispatch()
	q.mu.Unlock()
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-w.granted:
		// Granted as ctx ended: hand the slot on.
		q.releaseLocked(tenant)
	default:
		for i, x := range q.waiters {
			if x == w {
				q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
				break
			}
		}
		q.queued--
	}
	return ctx.Err()
}

// release frees tenant's slot.
func (q *queue) release(tenant string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.releaseLocked(tenant)
}

func (q *queue) releaseLocked(tenant string) {
	q.inFlight--
	q.perRun[tenant]--
	if q.perRun[tenant] == 0 {
		delete(q.perRun, tenant)
	}
	q.dispatch()
}

// dispatch grants free slots to the first waiters whose tenant is under
// its bound. q.mu is held.
func (q *queue) dispatch() {
	for i := 0; i < len(q.waiters) && q.inFlight < q.maxRun; {
		w := q.waiters[i]
		if q.perRun[w.tenant] >= q.perTenant {
			i++
			continue
		}
		q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
		q.queued--
		q.inFlight++
		q.perRun[w.tenant]++
		close(w.granted)
	}
}

// running and waiting return the runs in progress and queued.
func (q *queue) running() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.inFlight
}

func (q *queue) waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}
