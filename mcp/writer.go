package mcp

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// flushGrace bounds how long Serve, once done, waits for its last
// responses to be written: a client that stopped reading its stdout must
// not keep the server from returning.
const flushGrace = 5 * time.Second

// writer sends one JSON-RPC message per line from its own goroutine, so
// that no handler, and not the read loop, ever blocks in a Write to a
// client that does not read. Every queued message is charged to the
// budget until it is written: a stalled client makes the budget run out,
// which stops new requests (refused as busy) and, once even those replies
// do not fit, stops reading; memory stays bounded either way.
type writer struct {
	w       io.Writer
	budget  *budget
	onError func() // called once, on the first write error

	mu     sync.Mutex
	queue  []queued
	closed bool
	err    error         // the first write error; later messages are dropped
	wake   chan struct{} // capacity 1: the queue is not empty or closed
	done   chan struct{} // closed when the write loop has ended
}

// queued is a message and the bytes charged for it.
type queued struct {
	data   []byte
	charge int64
}

// newWriter starts the write loop.
func newWriter(w io.Writer, b *budget, onError func()) *writer {
	wr := &writer{w: w, budget: b, onError: onError, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go wr.loop()
	return wr
}

func (w *writer) loop() {
	defer close(w.done)
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.closed {
			w.mu.Unlock()
			<-w.wake
			w.mu.Lock()
		}
		if len(w.queue) == 0 {
			w.mu.Unlock()
			return
		}
		m := w.queue[0]
		w.queue[0] = queued{}
		w.queue = w.queue[1:]
		failed := w.err != nil
		w.mu.Unlock()
		if !failed {
			if _, err := w.w.Write(m.data); err != nil {
				w.fail(err)
			}
		}
		w.budget.release(m.charge)
	}
}

// fail records the first write error, drops what is queued and tells the
// server: nobody can read the results any more.
func (w *writer) fail(err error) {
	w.mu.Lock()
	first := w.err == nil
	if first {
		w.err = err
	}
	var dropped int64
	for _, m := range w.queue {
		dropped += m.charge
	}
	w.queue = nil
	w.mu.Unlock()
	w.budget.release(dropped)
	if first && w.onError != nil {
		w.onError()
	}
}

// reply queues a response for id. charged is what the request reserved
// when it was accepted (0 for a reply of the read loop); see send.
func (w *writer) reply(id json.RawMessage, result any, e *rpcError, charged int64, done <-chan struct{}) error {
	return w.send(encodeOrError(id, result, e), charged, done)
}

// encodeOrError encodes a response, or an internal error for id when the
// result cannot be encoded.
func encodeOrError(id json.RawMessage, result any, e *rpcError) []byte {
	data, err := encodeResponse(id, result, e)
	if err != nil {
		data, _ = encodeResponse(id, nil, errorf(CodeInternalError, "internal error: encoding the result: %v", err))
	}
	return data
}

// send queues one encoded message (a line). charged is what was reserved
// for it; a message that needs more waits until the budget has room or
// done is closed, in which case it is dropped. The reservation is given
// back when the message has been written or dropped. send returns the
// first write error.
func (w *writer) send(data []byte, charged int64, done <-chan struct{}) error {
	need := int64(len(data))
	switch {
	case need < charged:
		w.budget.release(charged - need)
	case need > charged:
		// Waiting while holding a reservation could deadlock with another
		// reply doing the same: give it back and wait for the whole.
		w.budget.release(charged)
		if !w.budget.acquire(need, done) {
			return w.writeErr()
		}
	}
	w.mu.Lock()
	if w.err != nil || w.closed {
		err := w.err
		w.mu.Unlock()
		w.budget.release(need)
		return err
	}
	w.queue = append(w.queue, queued{data: data, charge: need})
	w.mu.Unlock()
	w.signal()
	return nil
}

func (w *writer) writeErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *writer) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// close ends the write loop once the queue is written, waiting at most
// flushGrace, and returns the first write error. A loop still blocked in
// Write is left to end when its Write does.
func (w *writer) close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.signal()
	select {
	case <-w.done:
	case <-time.After(flushGrace):
	}
	return w.writeErr()
}
