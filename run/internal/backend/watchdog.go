package backend

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// End is why a run ended: set by the Watchdog, or EndExited once the
// run's processes are gone by themselves.
type End int32

// The reasons a run ends.
const (
	EndNormal   End = iota // not ended yet
	EndTimeout             // Spec.Timeout passed
	EndCanceled            // the run's context was canceled
	EndExited              // the init process or script exited by itself first
	EndOutput              // a stream passed Sandbox.MaxOutput
	EndLimit               // the watch found a cap passed (Limit says which)
)

// Watchdog ends a run, at any point once it is started, on its time
// limit, its context's cancellation, an output stream past MaxOutput or a
// cap the watch found passed, by calling stop once. Every backend has
// one per launch: it runs on a goroutine of the supervisor.
type Watchdog struct {
	ended    atomic.Int32 // an End
	limit    atomic.Pointer[string]
	tooMuch  chan struct{}
	tooOnce  sync.Once
	overCap  chan string
	done     chan struct{}
	finished sync.WaitGroup
}

// NewWatchdog returns the watchdog of one launch, not started.
func NewWatchdog() *Watchdog {
	return &Watchdog{tooMuch: make(chan struct{}), overCap: make(chan string, 1), done: make(chan struct{})}
}

// OutputExceeded reports a stream past MaxOutput; it may be called any
// number of times, from any goroutine.
func (w *Watchdog) OutputExceeded() { w.tooOnce.Do(func() { close(w.tooMuch) }) }

// Exceeded reports a cap the watch found passed (a run.Limit* value).
// It never blocks: the first cap reported ends the run, and one reported
// after it (by another watch, or once the run ended otherwise) is
// dropped, so a watch can report and go on to wait for the run's end.
func (w *Watchdog) Exceeded(what string) {
	select {
	case w.overCap <- what:
	default:
	}
}

// Done is closed by Finish: the run's processes are gone.
func (w *Watchdog) Done() <-chan struct{} { return w.done }

// Start watches until Finish; stop ends the run. stop runs on the
// watchdog's goroutine, which Finish waits for.
func (w *Watchdog) Start(ctx context.Context, timeout time.Duration, stop func()) {
	w.finished.Add(1)
	go func() {
		defer w.finished.Done()
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		reason := EndNormal
		select {
		case <-w.done:
			return
		case <-timer.C:
			reason = EndTimeout
		case <-ctx.Done():
			reason = EndCanceled
		case <-w.tooMuch:
			reason = EndOutput
		case what := <-w.overCap:
			w.limit.Store(&what)
			reason = EndLimit
		}
		if w.ended.CompareAndSwap(int32(EndNormal), int32(reason)) {
			stop()
		}
	}()
}

// Finish marks the run's processes gone (EndExited, unless the watchdog
// ended the run first), and returns once the watchdog has stopped.
func (w *Watchdog) Finish() {
	w.ended.CompareAndSwap(int32(EndNormal), int32(EndExited))
	close(w.done)
	w.finished.Wait()
}

// Ended returns why the run ended.
func (w *Watchdog) Ended() End { return End(w.ended.Load()) }

// Stopped reports whether the watchdog ended the run.
func (w *Watchdog) Stopped() bool {
	e := w.Ended()
	return e != EndNormal && e != EndExited
}

// Limit returns the cap the watch found passed when the run ended with
// EndLimit, "" otherwise.
func (w *Watchdog) Limit() string {
	if w.Ended() != EndLimit {
		return ""
	}
	return *w.limit.Load()
}

// RecordEnd sets in out why the watchdog w ended the run, if it did.
func RecordEnd(w *Watchdog, out *Outcome) {
	switch w.Ended() {
	case EndTimeout:
		out.TimedOut = true
	case EndCanceled:
		out.Canceled = true
	case EndLimit:
		out.LimitExceeded = w.Limit()
	}
}
