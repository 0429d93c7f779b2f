package mcp

import (
	"encoding/json"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/internal/refusecap"
)

// Caps on the records of refused requests: a client that sends garbage
// as fast as it can must not fill the disk with records, nor the memory
// with refusals waiting for one (docs/audit.md, "Refused requests").
const refusedPerWindow, refusedWindow = refusecap.PerWindow, refusecap.Window

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

// newRefusalLog returns the rate-capped log of refused-request records
// (internal/refusecap) writing through write.
func newRefusalLog(perWindow int, write func(audit.ProtocolRecord)) *refusecap.Log[rpcRefusal] {
	return refusecap.New(perWindow, refusedWindow, func(r rpcRefusal, suppressed int64) { write(recordOf(r, suppressed)) })
}

// capRefusal bounds the strings of a refusal, which may be held back
// until its record is written.
func capRefusal(r rpcRefusal) rpcRefusal {
	r.method, r.tool, r.client = capString(r.method), capString(r.tool), capString(r.client)
	if len(r.id) > 256 {
		r.id = r.id[:256]
	}
	r.message = oneLine(r.message, 1024)
	return r
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
	s.refusals.Add(capRefusal(r))
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
