// Package refusecap bounds the audit records of refused requests: a
// client that sends refused requests as fast as it can must fill neither
// the disk with records nor the memory with refusals waiting for one.
//
// For most uses, New a Log with the function that writes one record, and
// Add each refusal; Flush when the connection or the server ends. At most
// perWindow records are written in each window; past that a refusal is
// only counted, and the last one kept: when the window ends (a timer) or
// Flush is called, it gets its record with the count of those before it
// that got none (suppressed). A refusal written within the cap carries
// the count too, so the sum of 1 + suppressed over the records is the
// number of refusals. Memory is constant: a counter and one refusal.
package refusecap

import (
	"sync"
	"time"
)

// The cap skill-sandbox mcp and serve apply (docs/audit.md, "Refused
// requests"): 16 records a second.
const (
	PerWindow = 16
	Window    = time.Second
)

// Log writes the records of refusals of type T, at most perWindow in
// each window. Make one with New.
type Log[T any] struct {
	write     func(r T, suppressed int64)
	perWindow int
	window    time.Duration

	mu         sync.Mutex
	start      time.Time // of the current window
	written    int       // records written in the current window
	suppressed int64     // refusals since the last record without one, pending included
	pending    *T        // the last of them
	timer      *time.Timer
}

// New returns a Log that calls write for each record, with the count of
// refusals before r that got no record.
func New[T any](perWindow int, window time.Duration, write func(r T, suppressed int64)) *Log[T] {
	return &Log[T]{write: write, perWindow: perWindow, window: window}
}

// Add records r, or counts it when the window's records are used up.
// The caller caps r's strings first: a held-back r is kept until its
// record is written.
func (l *Log[T]) Add(r T) {
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.start) >= l.window {
		l.start, l.written = now, 0
	}
	if l.written >= l.perWindow {
		l.suppressed++
		l.pending = &r
		if l.timer == nil {
			l.timer = time.AfterFunc(l.start.Add(l.window).Sub(now), func() { l.flushPending(true) })
		}
		l.mu.Unlock()
		return
	}
	l.written++
	suppressed := l.suppressed
	l.suppressed, l.pending = 0, nil
	l.stopTimer()
	l.mu.Unlock()
	l.write(r, suppressed)
}

// Flush writes the record of the held-back refusal, if any: when the
// connection or the server ends.
func (l *Log[T]) Flush() { l.flushPending(false) }

// flushPending writes the record of the held-back refusal, if any. For
// the timer (expired), only once its window is over: a timer whose
// window Add has replaced since is stale, and must neither write early
// nor start a window of its own. The record counts in the window it is
// written in.
func (l *Log[T]) flushPending(expired bool) {
	l.mu.Lock()
	now := time.Now()
	r, suppressed := l.pending, l.suppressed-1
	if r == nil || expired && now.Sub(l.start) < l.window {
		l.mu.Unlock()
		return
	}
	l.suppressed, l.pending = 0, nil
	l.stopTimer()
	if now.Sub(l.start) >= l.window {
		l.start, l.written = now, 0
	}
	l.written++
	l.mu.Unlock()
	l.write(*r, suppressed)
}

// stopTimer stops the flush timer; l.mu is held.
func (l *Log[T]) stopTimer() {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}
