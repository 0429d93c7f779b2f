package serve

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// logsPerSecond bounds the lines a client without a valid token can make
// the server log (unknown tokens, TLS handshake errors): thousands of
// requests a second would otherwise write as many lines. The counters of
// /metrics still count every one.
const logsPerSecond = 10

// logLimit lets at most logsPerSecond lines through each second and
// counts the others, for a summary line once the second is over.
type logLimit struct {
	mu      sync.Mutex
	window  time.Time
	n       int
	dropped int
}

// allow reports whether a line may be written at now and how many lines
// were dropped in the previous second (to be reported once).
func (l *logLimit) allow(now time.Time) (ok bool, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.window) >= time.Second {
		dropped, l.dropped = l.dropped, 0
		l.window, l.n = now, 0
	}
	if l.n >= logsPerSecond {
		l.dropped++
		return false, dropped
	}
	l.n++
	return true, dropped
}

// limitedLog writes msg at level to log through lim, with a summary of
// the lines dropped before.
func limitedLog(log *slog.Logger, lim *logLimit, level slog.Level, msg string, args ...any) {
	ok, dropped := lim.allow(time.Now())
	if dropped > 0 {
		log.Warn("log lines dropped: more than the limit a second", "limit", logsPerSecond, "dropped", dropped)
	}
	if ok {
		log.Log(context.Background(), level, msg, args...)
	}
}

// limitedWriter is the HTTP server's error log: each line becomes a
// WARN record, at most logsPerSecond a second.
type limitedWriter struct {
	log *slog.Logger
	lim *logLimit
}

func (w limitedWriter) Write(p []byte) (int, error) {
	limitedLog(w.log, w.lim, slog.LevelWarn, strings.TrimSpace(string(p)))
	return len(p), nil
}
