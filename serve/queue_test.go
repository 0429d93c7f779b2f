package serve

import (
	"context"
	"testing"
	"time"
)

// TestQueueBounds: admit refuses past slots plus queue places; slots go
// in order of arrival, skipping a tenant at its bound; a waiter whose
// context ends gives its place up.
func TestQueueBounds(t *testing.T) {
	q := newQueue(2, 2, 1, 4)
	for i, tn := range []string{"a", "a", "b", "c"} {
		if !q.admit(tn) {
			t.Fatalf("admit %d refused", i)
		}
	}
	if q.admit("d") {
		t.Fatal("admitted past 2 slots and 2 places")
	}
	ctx := context.Background()
	if err := q.acquire(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	// Tenant a is at its bound: its second run waits, b's goes ahead.
	gotA := make(chan error, 1)
	go func() { gotA <- q.acquire(ctx, "a") }()
	time.Sleep(20 * time.Millisecond)
	if err := q.acquire(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gotA:
		t.Fatal("tenant a got a second slot past its bound")
	case <-time.After(20 * time.Millisecond):
	}
	if q.running() != 2 || q.waiting() != 2 {
		t.Fatalf("running %d waiting %d", q.running(), q.waiting())
	}
	q.release("a")
	if err := <-gotA; err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := q.acquire(cctx, "c"); err == nil {
		t.Fatal("acquire with a canceled context succeeded")
	}
	if q.waiting() != 0 || q.running() != 2 {
		t.Fatalf("after the canceled wait: running %d waiting %d", q.running(), q.waiting())
	}
	q.release("a")
	q.release("b")
	if !q.admit("d") || !q.admit("d") {
		t.Fatal("places not freed")
	}
}

// TestQueueTenantShare: one tenant cannot take more than its share of
// the queue; another still gets a place.
func TestQueueTenantShare(t *testing.T) {
	q := newQueue(1, 4, 1, 2)
	for i := range 3 { // one slot and two places
		if !q.admit("a") {
			t.Fatalf("admit %d of a refused", i)
		}
	}
	if q.admit("a") {
		t.Fatal("a took more than its share")
	}
	if !q.admit("b") {
		t.Fatal("b found no place")
	}
	if err := q.acquire(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if q.acquire(cctx, "a") == nil { // a is at its bound: it waits, then gives its place up
		t.Fatal("a got a second slot")
	}
	if !q.admit("a") {
		t.Fatal("a's place was not given back")
	}
}
