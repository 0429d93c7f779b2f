package audit

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Events of the workspace file tools of skill-sandbox mcp (schema version
// 4): one record per call, refused calls included.
const (
	EventWorkspaceWrite = "workspace.write"
	EventWorkspaceRead  = "workspace.read"
)

// Outcomes of a workspace record. A refused call is OutcomeRefused, as for
// a run.
const (
	OutcomeCompleted = "completed" // the file was written or read
)

// Error kinds of a workspace record besides KindUsage, KindPolicy and
// KindInternal.
const (
	// KindUnsafePath: the path leaves the workspace, goes through a
	// symbolic link, or names something other than a regular file.
	KindUnsafePath = "unsafe_path"
	// KindIO: the file operation failed (no such file, disk full, ...).
	KindIO = "io"
)

// FileRecord is the audit record of one workspace file tool call
// (events workspace.write and workspace.read). It shares the envelope of
// Record (version, time, level, message, event, outcome, request id, the
// MCP call, tool, host, uid, pid); File says what was read or written.
type FileRecord struct {
	SchemaVersion string `json:"schema_version"`
	Timestamp     string `json:"timestamp"`
	Level         string `json:"level"`
	Message       string `json:"message"`
	Event         string `json:"event"`
	Outcome       string `json:"outcome"`
	RequestID     string `json:"request_id"`
	File          File   `json:"file"`
	Error         string `json:"error,omitempty"`
	ErrorKind     string `json:"error_kind,omitempty"`
	MCP           *MCP   `json:"mcp,omitempty"`
	Tool          Tool   `json:"tool"`
	Host          string `json:"host"`
	UID           int    `json:"uid"`
	PID           int    `json:"pid"`
}

// File is what a workspace call read or wrote.
type File struct {
	Workspace string `json:"workspace"` // the server's workspace folder
	Path      string `json:"path"`      // as asked, relative to Workspace
	Size      int64  `json:"size"`      // the file's size after the write or at the read
	Offset    int64  `json:"offset"`    // where the read began
	Bytes     int64  `json:"bytes"`     // bytes written or returned
	SHA256    string `json:"sha256"`    // of those bytes; "" when none
	Created   bool   `json:"created"`   // the write made a new file
	EOF       bool   `json:"eof"`       // the read reached the end
}

// NewFileRecord returns the record of a workspace call of event that
// ended with err (nil: completed) of kind (one of the Kind constants; ""
// for err nil), with the time, host and identity of this process filled
// in. refused says nothing was written or returned.
func NewFileRecord(event, requestID string, f File, refused bool, err error, kind string, m *MCP, version string) FileRecord {
	host, _ := os.Hostname()
	rec := FileRecord{
		SchemaVersion: SchemaVersion,
		Timestamp:     time.Now().UTC().Format(TimestampFormat),
		Level:         LevelInfo,
		Event:         event,
		Outcome:       OutcomeCompleted,
		RequestID:     requestID,
		File:          f,
		MCP:           m,
		Tool:          Tool{Name: ToolName, Version: version},
		Host:          host,
		UID:           os.Getuid(),
		PID:           os.Getpid(),
	}
	if rec.RequestID == "" {
		rec.RequestID, _ = NewRequestID()
	}
	verb := map[string]string{EventWorkspaceWrite: "write", EventWorkspaceRead: "read"}[event]
	switch {
	case err == nil && event == EventWorkspaceRead:
		rec.Message = fmt.Sprintf("workspace read %s: %d bytes from offset %d of %d", f.Path, f.Bytes, f.Offset, f.Size)
	case err == nil:
		rec.Message = fmt.Sprintf("workspace write %s: %d bytes", f.Path, f.Bytes)
	default:
		rec.Level, rec.Outcome = LevelError, OutcomeFailed
		if refused {
			rec.Outcome = OutcomeRefused
		}
		rec.Error, rec.ErrorKind = err.Error(), kind
		rec.Message = fmt.Sprintf("workspace %s %s %s: %s", verb, f.Path, rec.Outcome, err)
	}
	return rec
}

// MarshalLine returns the record as one line of JSON ending in "\n":
// names that are not valid UTF-8 written as in Record.MarshalLine, free
// text cut to the caps of a run record, DEL and C1 controls escaped.
func (r FileRecord) MarshalLine() ([]byte, error) {
	r.File.Workspace = truncate(EscapeInvalid(r.File.Workspace), maxPathBytes)
	r.File.Path = truncate(EscapeInvalid(r.File.Path), maxPathBytes)
	r.Message = truncate(EscapeInvalid(r.Message), maxMessageBytes)
	r.Error = truncate(EscapeInvalid(r.Error), maxErrorBytes)
	r.Host = truncate(r.Host, maxNameBytes)
	r.Tool.Version = truncate(r.Tool.Version, maxNameBytes)
	if r.MCP != nil {
		m := *r.MCP
		m.RequestID = truncate(m.RequestID, maxNameBytes)
		m.Client = truncate(EscapeInvalid(m.Client), maxNameBytes)
		m.Tool = truncate(m.Tool, maxNameBytes)
		r.MCP = &m
	}
	return encodeEscaped(r)
}

// AppendFile writes rec as one line with a single write(2) call, as Append
// does for a run record.
func (l *Log) AppendFile(rec FileRecord) error { return l.appendRecord(rec) }

// WriteFileRecord writes rec as one line to w with a single Write call.
func WriteFileRecord(w io.Writer, rec FileRecord) error { return writeRecord(w, rec) }
