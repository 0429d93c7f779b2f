package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
)

// isBatch reports whether line is a JSON array, a JSON-RPC batch (it may
// still be invalid JSON).
func isBatch(line []byte) bool {
	t := bytes.TrimLeft(line, " \t\r\n")
	return len(t) > 0 && t[0] == '['
}

// serveBatch handles a JSON-RPC batch, which only revision 2025-03-26 has
// (it added them, 2025-06-18 removed them): on a connection that
// negotiated another revision, or none yet (initialize may not be in a
// batch), the whole batch is refused with one -32600. Otherwise each
// member is handled as if it came alone and concurrently with the others,
// and the responses go back together as one array once every member is
// done, in the order they finished; a batch of notifications only gets
// no response, and an empty batch one -32600 (JSON-RPC 2.0, section 6).
func (s *Server) serveBatch(ctx context.Context, sess *session, line []byte, out *writer, accept func(*request, int, bool, respondFunc)) {
	refuse := func(e *rpcError) {
		s.refused(sess, nil, "", len(line), e)
		out.reply(nil, nil, e, 0, ctx.Done())
	}
	if !json.Valid(line) {
		refuse(errorf(CodeParseError, "parse error: the message is not valid JSON"))
		return
	}
	sess.mu.Lock()
	rev := revision(sess.version)
	sess.mu.Unlock()
	if !rev.batches() {
		if rev == "" {
			refuse(errorf(CodeInvalidRequest, "invalid request: batches are not supported before initialize, and only in protocol revision %s", VersionBatch))
		} else {
			refuse(errorf(CodeInvalidRequest, "invalid request: batches are not supported in protocol revision %s (only in %s)", rev, VersionBatch))
		}
		return
	}
	var members []json.RawMessage
	if err := json.Unmarshal(line, &members); err != nil || len(members) == 0 {
		refuse(errorf(CodeInvalidRequest, "invalid request: an empty batch"))
		return
	}
	b := &batchReply{pending: 1, send: func(data []byte, charged int64) {
		if len(data) == 0 {
			s.budget.release(charged)
			return
		}
		out.send(data, charged, ctx.Done())
	}}
	for _, m := range members {
		if isBatch(m) {
			// Not valid JSON-RPC in any revision.
			e := errorf(CodeInvalidRequest, "invalid request: a batch inside a batch")
			s.refused(sess, nil, "", len(m), e)
			b.expect()
			b.respond(nil, nil, e, 0, true)
			continue
		}
		req, id, perr := parseMessage(m)
		switch {
		case perr != nil:
			s.refused(sess, id, methodOf(m), len(m), perr)
			b.expect()
			b.respond(id, nil, perr, 0, true)
		case req == nil: // a response from the client
		case req.ID == nil:
			s.notification(sess, req)
		default:
			b.expect()
			accept(req, len(m), true, b.respond)
		}
	}
	b.respond(nil, nil, nil, 0, false) // the loop's own hold
}

// batchReply collects the responses of a batch's members and sends them
// as one array when the last is in.
type batchReply struct {
	send func(data []byte, charged int64)

	mu      sync.Mutex
	parts   [][]byte // encoded responses, without their line ends
	charged int64    // what the members reserved
	pending int      // members not answered yet, +1 while they are being read
}

// expect counts one more member that will respond.
func (b *batchReply) expect() {
	b.mu.Lock()
	b.pending++
	b.mu.Unlock()
}

// respond is a respondFunc for a member of the batch.
func (b *batchReply) respond(id json.RawMessage, result any, e *rpcError, charged int64, answer bool) {
	var part []byte
	if answer {
		part = bytes.TrimSuffix(encodeOrError(id, result, e), []byte("\n"))
	}
	b.mu.Lock()
	if answer {
		b.parts = append(b.parts, part)
	}
	b.charged += charged
	b.pending--
	last := b.pending == 0
	b.mu.Unlock()
	if !last {
		return
	}
	var data []byte
	if len(b.parts) > 0 {
		data = append([]byte("["), bytes.Join(b.parts, []byte(","))...)
		data = append(data, "]\n"...)
	}
	// An empty message only gives the reservations back.
	b.send(data, b.charged)
}
