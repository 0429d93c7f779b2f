package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// EventRefused is the event of the record of an MCP request that
// skill-sandbox mcp refused at the protocol level, before or while
// dispatching it, with a JSON-RPC error (schema version 5): a line that
// is not JSON or too long, an invalid request, an unknown method or
// tool, a second initialize, the server busy. A tools/call that reached
// its tool has a run or workspace record instead.
const EventRefused = "mcp.refused"

// KindProtocol is the error_kind of a refused-request record.
const KindProtocol = "protocol"

// maxMethodBytes caps the method name kept in a refused-request record.
const maxMethodBytes = 200

// ProtocolRecord is the audit record of one MCP request refused at the
// protocol level (event mcp.refused), or of several when the server's
// rate cap coalesced them (Protocol.Suppressed). It shares the envelope
// of Record; Protocol says what was refused and why.
type ProtocolRecord struct {
	SchemaVersion string   `json:"schema_version"`
	Timestamp     string   `json:"timestamp"`
	Level         string   `json:"level"`
	Message       string   `json:"message"`
	Event         string   `json:"event"`
	Outcome       string   `json:"outcome"`
	RequestID     string   `json:"request_id"`
	Protocol      Protocol `json:"protocol"`
	Error         string   `json:"error"`
	ErrorKind     string   `json:"error_kind"`
	MCP           *MCP     `json:"mcp"`
	Tool          Tool     `json:"tool"`
	Host          string   `json:"host"`
	UID           int      `json:"uid"`
	PID           int      `json:"pid"`
}

// Protocol is what a refused request was and the error it got.
type Protocol struct {
	// Method is the request's method; "" when it could not be read.
	Method string `json:"method"`
	// Code is the JSON-RPC error code sent back.
	Code int `json:"code"`
	// Bytes is the size of the message in bytes (of a message over the
	// cap: the cap plus one); 0 when not known.
	Bytes int64 `json:"bytes"`
	// Suppressed counts the refused requests before this one, since the
	// previous refused-request record, that got no record of their own
	// because the server's cap on these records was reached.
	Suppressed int64 `json:"suppressed"`
}

// NewProtocolRecord returns the record of a refused request: p, the
// error message sent (reason), the MCP call (m.RequestID is the
// request's JSON-RPC id as JSON text, "" when none could be read), with
// the time, host and identity of this process filled in.
func NewProtocolRecord(requestID string, p Protocol, reason string, m MCP, version string) ProtocolRecord {
	host, _ := os.Hostname()
	if requestID == "" {
		requestID, _ = NewRequestID()
	}
	id := m.RequestID
	if id == "" {
		id = "null"
	}
	msg := fmt.Sprintf("mcp request %s refused (%d): %s", id, p.Code, reason)
	if p.Suppressed > 0 {
		msg += fmt.Sprintf(" (and %d refused requests before it without a record: over the cap)", p.Suppressed)
	}
	return ProtocolRecord{
		SchemaVersion: SchemaVersion,
		Timestamp:     time.Now().UTC().Format(TimestampFormat),
		Level:         LevelWarn,
		Message:       msg,
		Event:         EventRefused,
		Outcome:       OutcomeRefused,
		RequestID:     requestID,
		Protocol:      p,
		Error:         reason,
		ErrorKind:     KindProtocol,
		MCP:           &m,
		Tool:          Tool{Name: ToolName, Version: version},
		Host:          host,
		UID:           os.Getuid(),
		PID:           os.Getpid(),
	}
}

// MarshalLine returns the record as one line of JSON ending in "\n", free
// text cut and escaped as in FileRecord.MarshalLine: the method, id and
// reason come from the client.
func (r ProtocolRecord) MarshalLine() ([]byte, error) {
	r.Protocol.Method = truncate(EscapeInvalid(r.Protocol.Method), maxMethodBytes)
	r.Message = truncate(EscapeInvalid(r.Message), maxMessageBytes)
	r.Error = truncate(EscapeInvalid(r.Error), maxErrorBytes)
	r.Host = truncate(r.Host, maxNameBytes)
	r.Tool.Version = truncate(r.Tool.Version, maxNameBytes)
	m := MCP{}
	if r.MCP != nil {
		m = *r.MCP
	}
	m.RequestID = truncate(EscapeInvalid(m.RequestID), maxNameBytes)
	m.Client = truncate(EscapeInvalid(m.Client), maxNameBytes)
	m.Tool = truncate(EscapeInvalid(m.Tool), maxNameBytes)
	r.MCP = &m
	return encodeEscaped(r)
}

// AppendProtocol writes rec as one line with a single write(2) call, as
// Append does for a run record.
func (l *Log) AppendProtocol(rec ProtocolRecord) error { return l.appendRecord(rec) }

// WriteProtocolRecord writes rec as one line to w with a single Write
// call.
func WriteProtocolRecord(w io.Writer, rec ProtocolRecord) error { return writeRecord(w, rec) }

// lineRecord is a record of a shape other than Record, capped by its
// MarshalLine.
type lineRecord interface{ MarshalLine() ([]byte, error) }

func (l *Log) appendRecord(r lineRecord) error {
	line, err := r.MarshalLine()
	if err != nil {
		return err
	}
	return l.appendLine(line)
}

func writeRecord(w io.Writer, r lineRecord) error {
	line, err := r.MarshalLine()
	if err != nil {
		return err
	}
	return writeLine(w, line)
}

// encodeEscaped encodes a capped record as one line: HTML characters
// kept, DEL and C1 controls escaped.
func encodeEscaped(r any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil { // Encode ends the line with "\n"
		return nil, fmt.Errorf("audit record: %w", err)
	}
	return escapeC1(buf.Bytes()), nil
}
