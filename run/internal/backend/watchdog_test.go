package backend

import (
	"context"
	"testing"
	"time"
)

// TestWatchdog: each way of ending a run is recorded once, stop is
// called exactly when the watchdog ended the run, and a run whose
// processes end first is EndExited.
func TestWatchdog(t *testing.T) {
	tests := []struct {
		name      string
		timeout   time.Duration
		trigger   func(w *Watchdog, cancel context.CancelFunc)
		want      End
		wantLimit string
	}{
		{"timeout", time.Nanosecond, func(*Watchdog, context.CancelFunc) {}, EndTimeout, ""},
		{"canceled", time.Hour, func(_ *Watchdog, cancel context.CancelFunc) { cancel() }, EndCanceled, ""},
		{"output", time.Hour, func(w *Watchdog, _ context.CancelFunc) { w.OutputExceeded(); w.OutputExceeded() }, EndOutput, ""},
		{"limit", time.Hour, func(w *Watchdog, _ context.CancelFunc) { w.Exceeded("workdir") }, EndLimit, "workdir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := NewWatchdog()
			stopped := make(chan struct{})
			w.Start(ctx, tt.timeout, func() { close(stopped) })
			tt.trigger(w, cancel)
			<-stopped // a second call would panic on the closed channel
			w.Finish()
			if got := w.Ended(); got != tt.want {
				t.Errorf("ended %d, want %d", got, tt.want)
			}
			if !w.Stopped() {
				t.Error("Stopped is false after the watchdog ended the run")
			}
			if got := w.Limit(); got != tt.wantLimit {
				t.Errorf("limit %q, want %q", got, tt.wantLimit)
			}
		})
	}
	t.Run("caps after the end", func(t *testing.T) {
		// Two watches reporting after a timeout ended the run: neither
		// may block (each waits for the run's end after reporting).
		w := NewWatchdog()
		stopped := make(chan struct{})
		w.Start(context.Background(), time.Millisecond, func() { close(stopped) })
		<-stopped
		done := make(chan struct{})
		go func() {
			w.Exceeded("memory")
			w.Exceeded("write_bytes")
			w.Exceeded("memory")
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Exceeded blocked after the run ended")
		}
		w.Finish()
		if w.Ended() != EndTimeout || w.Limit() != "" {
			t.Errorf("ended %d limit %q, want EndTimeout", w.Ended(), w.Limit())
		}
	})
	t.Run("exited", func(t *testing.T) {
		w := NewWatchdog()
		w.Start(context.Background(), time.Hour, func() { t.Error("stop called for a run that exited") })
		w.Finish()
		if w.Ended() != EndExited || w.Stopped() || w.Limit() != "" {
			t.Errorf("ended %d stopped %v limit %q, want EndExited", w.Ended(), w.Stopped(), w.Limit())
		}
		select {
		case <-w.Done():
		default:
			t.Error("Done is open after Finish")
		}
	})
}
