package mcp

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// Caps on the records of refused requests: a client that sends garbage
// as fast as it can must not fill the disk with records, nor the memory
// with refusals waiting for one (docs/audit.md, "Refused requests").
const (
	refusedPerWindow = 16
	refusedWindow    = time.Second
)

// rpcRefusal is one request refused at the protocol level.
type rpcRefusal struct {
	id      json.RawMessage // the request's JSON-RPC id; nil when none was read
	method  string
	tool    string // the tool a tools/call named
	client  string
	bytes   int64
	code    int
	message string
}

// refusalLog writes one audit record per refused request, at most
// refusedPerWindow in each refusedWindow. Past the cap a refusal is only
// counted, and kept when it is the last: when the window ends (a timer)
// or the connection does (flush), that last one gets its record, with the
// count of those before it that got none. A refusal that gets a record
// within the cap also carries the count. Memory is constant: a counter
// and one refusal (its strings capped).
type refusalLog struct {
	write     func(audit.ProtocolRecord)
	perWindow int // refusedPerWindow; a test raises it

	mu         sync.Mutex
	start      time.Time   // of the current window
	written    int         // records written in the current window
	suppressed int64       // refusals since the last record without one, pending included
	pending    *rpcRefusal // the last of them
	timer      *time.Timer
}

// add records r, or counts it when the window's records are used up.
func (l *refusalLog) add(r rpcRefusal) {
	r.method, r.tool, r.client = capString(r.method), capString(r.tool), capString(r.client)
	if len(r.id) > 256 {
		r.id = r.id[:256]
	}
	r.message = oneLine(r.message, 1024)
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.start) >= refusedWindow {
		l.start, l.written = now, 0
	}
	if l.written >= l.perWindow {
		l.suppressed++
		l.pending = &r
		if l.timer == nil {
			l.timer = time.AfterFunc(l.start.Add(refusedWindow).Sub(now), func() { l.flushPending(true) })
		}
		l.mu.Unlock()
		return
	}
	l.written++
	suppressed := l.suppressed
	l.suppressed, l.pending = 0, nil
	l.stopTimer()
	l.mu.Unlock()
	l.write(recordOf(r, suppressed))
}

// flush writes the record of the pending refusal, if any: when the
// connection ends.
func (l *refusalLog) flush() { l.flushPending(false) }

// flushPending writes the record of the pending refusal, if any. For the
// timer (expired), only once its window is over: a timer whose window
// add has replaced since is stale, and must neither write early nor
// start a window of its own. The record counts in the window it is
// written in.
func (l *refusalLog) flushPending(expired bool) {
	l.mu.Lock()
	now := time.Now()
	r, suppressed := l.pending, l.suppressed-1
	if r == nil || expired && now.Sub(l.start) < refusedWindow {
		l.mu.Unlock()
		return
	}
	l.suppressed, l.pending = 0, nil
	l.stopTimer()
	if now.Sub(l.start) >= refusedWindow {
		l.start, l.written = now, 0
	}
	l.written++
	l.mu.Unlock()
	l.write(recordOf(*r, suppressed))
}

// stopTimer stops the flush timer; l.mu is held.
func (l *refusalLog) stopTimer() {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
}

func recordOf(r rpcRefusal, suppressed int64) audit.ProtocolRecord {
	return audit.NewProtocolRecord("",
		audit.Protocol{Method: r.method, Code: r.code, Bytes: r.bytes, Suppressed: suppressed},
		r.message, audit.MCP{RequestID: string(r.id), Client: r.client, Tool: r.tool}, "")
}

// capString bounds a string kept while a refusal waits.
func capString(s string) string {
	if len(s) > 256 {
		return s[:256]
	}
	return s
}

// refused records a request refused at the protocol level with e: id
// and method as far as they could be read (nil, ""), size its bytes (0
// when not known). Every transport's reading path calls it for what it
// refuses before dispatch; handle calls it for what dispatch refuses.
func (s *Server) refused(sess *session, id json.RawMessage, method string, size int, e *rpcError) {
	r := rpcRefusal{id: id, method: method, bytes: int64(size), code: e.Code, message: e.Message}
	if sess != nil {
		sess.mu.Lock()
		r.client = sess.client.Name
		sess.mu.Unlock()
	}
	s.refusals.add(r)
}

// writeRefusal writes a refused-request record to the audit log, or on
// the server's log; a failure is logged.
func (s *Server) writeRefusal(rec audit.ProtocolRecord) {
	rec.Tool.Version = s.cfg.Version
	var err error
	switch {
	case s.cfg.AuditLog != nil:
		err = s.cfg.AuditLog.AppendProtocol(rec)
	case s.cfg.Log != nil:
		s.logMu.Lock()
		err = audit.WriteProtocolRecord(s.cfg.Log, rec)
		s.logMu.Unlock()
	}
	if err != nil {
		s.logf("audit record of a refused request not written: %v", err)
	}
}

// methodOf reads the method of a JSON object whose other members may be
// wrong, for the record of its refusal; "" when there is none. The key
// must be "method" exactly (a map's keys are not folded).
func methodOf(obj []byte) string {
	var m map[string]json.RawMessage
	var method string
	if json.Unmarshal(obj, &m) != nil || json.Unmarshal(m["method"], &method) != nil {
		return ""
	}
	return method
}
