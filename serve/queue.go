package serve

import (
	"context"
	"sync"
)

// queue bounds the runs in progress (maxRun, and perTenant for each
// tenant) and the accepted runs waiting for a slot (maxWait, and
// tenantWait for each tenant, so that one tenant cannot take every
// place). Waiting runs get slots in the order they were accepted,
// skipping those whose tenant is at its bound.
type queue struct {
	maxRun, maxWait, perTenant, tenantWait int

	mu        sync.Mutex
	inFlight  int
	queued    int // admitted and not yet running
	perRun    map[string]int
	perQueued map[string]int
	waiters   []*waiter
}

// waiter is one run waiting for a slot.
type waiter struct {
	tenant  string
	granted chan struct{}
}

func newQueue(maxRun, maxWait, perTenant, tenantWait int) *queue {
	return &queue{maxRun: maxRun, maxWait: maxWait, perTenant: perTenant, tenantWait: tenantWait,
		perRun: map[string]int{}, perQueued: map[string]int{}}
}

// admit reserves a place for one run of tenant, in a slot or the queue;
// false means both are full, for everyone or for this tenant.
func (q *queue) admit(tenant string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.roomLocked(tenant) {
		return false
	}
	q.queued++
	q.perQueued[tenant]++
	return true
}

// hasRoom reports whether admit would take a run of tenant now.
func (q *queue) hasRoom(tenant string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.roomLocked(tenant)
}

// roomLocked is hasRoom with q.mu held.
func (q *queue) roomLocked(tenant string) bool {
	return q.inFlight+q.queued < q.maxRun+q.maxWait &&
		q.perRun[tenant]+q.perQueued[tenant] < q.perTenant+q.tenantWait
}

// unqueue ends tenant's wait for one run. q.mu is held.
func (q *queue) unqueue(tenant string) {
	q.queued--
	if q.perQueued[tenant]--; q.perQueued[tenant] == 0 {
		delete(q.perQueued, tenant)
	}
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
		q.unqueue(tenant)
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
		q.unqueue(w.tenant)
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
