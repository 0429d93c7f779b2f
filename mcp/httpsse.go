package mcp

import (
	"errors"
	"net/http"
	"sync"
	"time"
)

// errStreamClosed is returned by a write to an SSE stream after stop.
var errStreamClosed = errors.New("the SSE stream is closed")

// sseStream writes JSON-RPC messages as the events of a text/event-stream
// response, with a keep-alive comment when nothing was sent for a while.
type sseStream struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	quit chan struct{}
	done chan struct{}

	mu     sync.Mutex
	closed bool
}

// startSSE writes the stream's headers and starts its keep-alive.
func startSSE(w http.ResponseWriter, keepAlive time.Duration) *sseStream {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	// Proxies such as nginx would otherwise hold the events back.
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	s := &sseStream{w: w, rc: http.NewResponseController(w), quit: make(chan struct{}), done: make(chan struct{})}
	s.rc.Flush()
	go s.keepAlive(keepAlive)
	return s
}

func (s *sseStream) keepAlive(every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			if s.send([]byte(": keep-alive\n\n")) != nil {
				return
			}
		}
	}
}

// Write sends one message (a line, as the writer makes them) as an event.
func (s *sseStream) Write(line []byte) (int, error) {
	n := len(line)
	ev := make([]byte, 0, len(line)+24)
	ev = append(ev, "event: message\ndata: "...)
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	ev = append(ev, line...)
	ev = append(ev, "\n\n"...)
	if err := s.send(ev); err != nil {
		return 0, err
	}
	return n, nil
}

func (s *sseStream) send(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.rc.Flush()
}

// stop ends the keep-alive and makes later writes fail: the handler is
// about to return, after which the ResponseWriter may not be used. A
// write still blocked on a client that does not read gets flushGrace to
// end; the deadline is then lifted, so that a connection whose writes
// all ended is kept for the client's next request. The deadline comes
// before the wait for the keep-alive, which may itself wait behind such
// a write.
func (s *sseStream) stop() {
	close(s.quit)
	s.rc.SetWriteDeadline(time.Now().Add(flushGrace))
	<-s.done
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.rc.SetWriteDeadline(time.Time{})
}
