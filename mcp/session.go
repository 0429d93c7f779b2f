package mcp

import (
	"context"
	"sync"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// session is the state of one connection: the in-flight requests and, for
// clients of the handshake revisions, what initialize said.
type session struct {
	pool     *run.Pool // set before the first request; nil without Prestart
	mu       sync.Mutex
	inflight map[string]context.CancelFunc
	client   clientInfo
	version  string // negotiated by initialize; "" before
}

// start registers a request id. It reports ok=false when the id is in use,
// and a nil context when too many requests are in flight.
func (s *session) start(parent context.Context, key string) (context.Context, context.CancelFunc, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.inflight[key]; dup {
		return nil, nil, false
	}
	if len(s.inflight) >= maxInFlight {
		return nil, nil, true
	}
	ctx, cancel := context.WithCancel(parent)
	s.inflight[key] = cancel
	return ctx, cancel, true
}

func (s *session) finish(key string, cancel context.CancelFunc) {
	s.mu.Lock()
	delete(s.inflight, key)
	s.mu.Unlock()
	cancel()
}

func (s *session) cancel(key string) bool {
	s.mu.Lock()
	c, ok := s.inflight[key]
	s.mu.Unlock()
	if ok {
		c()
	}
	return ok
}
