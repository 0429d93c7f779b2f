package refusecap

import (
	"testing"
	"time"
)

type rec struct {
	r          string
	suppressed int64
}

// TestWindowFlush: refusals held back by the cap get their record when
// the window ends, without waiting for Flush.
func TestWindowFlush(t *testing.T) {
	got := make(chan rec, 4)
	l := New(1, 50*time.Millisecond, func(r string, n int64) { got <- rec{r, n} })
	for _, r := range []string{"0", "1", "2"} {
		l.Add(r)
	}
	if first := <-got; first != (rec{"0", 0}) {
		t.Errorf("first record %+v", first)
	}
	select {
	case r := <-got:
		if r != (rec{"2", 1}) {
			t.Errorf("flushed record %+v, want 2 with 1 suppressed", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the held-back refusals got no record when the window ended")
	}
	l.Flush()
	if len(got) != 0 {
		t.Errorf("Flush wrote a record with nothing pending")
	}
}

// TestStaleTimer: a timer that fires for a window already replaced
// (late, under load, while a new refusal armed the next one) writes
// nothing and starts no window: otherwise each stale timer would let
// perWindow more records through within the window.
func TestStaleTimer(t *testing.T) {
	var got []rec
	l := New(1, time.Second, func(r string, n int64) { got = append(got, rec{r, n}) })
	l.Add("a")
	l.Add("b")           // over the cap: pending
	l.flushPending(true) // as a stale timer would, within the window
	l.Add("c")
	l.mu.Lock()
	written, suppressed := l.written, l.suppressed
	l.stopTimer()
	l.mu.Unlock()
	if len(got) != 1 || written != 1 || suppressed != 2 {
		t.Errorf("%d records, %d written in the window, %d suppressed; want 1, 1, 2", len(got), written, suppressed)
	}
}

// TestFloodAccounted: every refusal of a flood is accounted for by the
// records' counts, and the records stay within the cap.
func TestFloodAccounted(t *testing.T) {
	var got []rec
	l := New(16, time.Hour, func(r string, n int64) { got = append(got, rec{r, n}) })
	for range 10000 {
		l.Add("x")
	}
	l.Flush()
	var total int64
	for _, r := range got {
		total += 1 + r.suppressed
	}
	if len(got) != 17 || total != 10000 {
		t.Errorf("%d records accounting for %d refusals; want 17 for 10000", len(got), total)
	}
}
