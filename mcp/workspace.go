package mcp

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/internal/autorun"
	"github.com/skill-sandbox/skill-sandbox/internal/denylist"
	"github.com/skill-sandbox/skill-sandbox/internal/realpath"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// Names of the workspace file tools, offered only with a workspace.
const (
	ToolWriteWorkspaceFile = "write_workspace_file"
	ToolReadWorkspaceFile  = "read_workspace_file"
)

// maxWorkspacePath bounds the path argument of a workspace call.
const maxWorkspacePath = 4096

// fileError is a workspace call that was refused or failed: kind is the
// record's error_kind, refused says that nothing was written or returned.
type fileError struct {
	kind    string
	refused bool
	err     error
}

func (e *fileError) Error() string { return e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

func refusal(kind, format string, a ...any) *fileError {
	return &fileError{kind: kind, refused: true, err: fmt.Errorf(format, a...)}
}

// workspaceTools are the tools that put a file into the workspace and read
// one back, offered only with a workspace.
func (s *Server) workspaceTools() []tool {
	encoding := func(desc string) map[string]any {
		return map[string]any{"type": "string", "enum": []string{"text", "base64"}, "description": desc}
	}
	destructive := true
	closed := false
	fileOut := func(props map[string]any) map[string]any {
		p := map[string]any{
			"request_id": strSchema("id of the call, also in its audit record"),
			"outcome":    map[string]any{"type": "string", "enum": []string{audit.OutcomeCompleted, audit.OutcomeRefused, audit.OutcomeFailed}},
			"path":       strSchema("the path asked for"),
			"size":       map[string]any{"type": "integer", "description": "size of the file"},
			"bytes":      map[string]any{"type": "integer", "description": "bytes written or returned"},
			"sha256":     strSchema("SHA-256 of those bytes"),
			"error":      strSchema("why the call was refused or failed"),
			"error_kind": strSchema("usage, unsafe_path, policy, io or internal"),
		}
		for k, v := range props {
			p[k] = v
		}
		return map[string]any{"type": "object", "properties": p, "required": []string{"request_id", "outcome", "path", "size", "bytes", "sha256"}}
	}
	return []tool{
		{
			Name:        ToolWriteWorkspaceFile,
			Title:       "Write a file into the workspace",
			Annotations: &toolAnnotations{Title: "Write a file into the workspace", DestructiveHint: &destructive, IdempotentHint: true, OpenWorldHint: &closed},
			Description: fmt.Sprintf("Write a file into the workspace %s (an input for a script or command), replacing one of that name; missing folders on the way are created. "+
				"The path is relative to the workspace; it may not leave it, go through a symbolic link, or name a file the caller's tools run on their own (.git, .envrc, editor settings). "+
				"Content is text, or base64 for binary files; at most %d MiB, and one message holds at most %d bytes.", s.cfg.Workspace, s.workspaceWriteCap()>>20, s.cfg.MaxMessageBytes),
			InputSchema: objSchema(map[string]any{
				"path":     strSchema("file path relative to the workspace, e.g. in/data.csv"),
				"content":  strSchema("the file's content: text, or base64 with encoding base64"),
				"encoding": encoding(`"text" (the default) or "base64"`),
			}, "path", "content"),
			OutputSchema: fileOut(map[string]any{"created": map[string]any{"type": "boolean", "description": "no file of that name was there"}}),
		},
		{
			Name:        ToolReadWorkspaceFile,
			Title:       "Read a file of the workspace",
			Annotations: readOnly("Read a file of the workspace"),
			Description: fmt.Sprintf("Read a file of the workspace %s (an output of a script or command), at most %d bytes per call: page through a larger one with offset (next_offset, until eof). "+
				"The path is relative to the workspace; it may not leave it or go through a symbolic link, and only regular files are read. "+
				"Text is returned as it is (a page ends on a whole character); use encoding base64 for binary files.", s.cfg.Workspace, s.cfg.MaxFileBytes),
			InputSchema: objSchema(map[string]any{
				"path":      strSchema("file path relative to the workspace, e.g. out/report.md"),
				"offset":    map[string]any{"type": "integer", "minimum": 0, "description": "where to start, in bytes (default 0)"},
				"max_bytes": map[string]any{"type": "integer", "exclusiveMinimum": 0, "description": fmt.Sprintf("at most this many bytes (default and cap %d)", s.cfg.MaxFileBytes)},
				"encoding":  encoding(`"text" (the default; refused for bytes that are not UTF-8) or "base64"`),
			}, "path"),
			OutputSchema: fileOut(map[string]any{
				"offset": map[string]any{"type": "integer"}, "next_offset": map[string]any{"type": "integer"}, "eof": map[string]any{"type": "boolean"},
				"encoding": map[string]any{"type": "string"}, "content": strSchema("the bytes read, as text or base64"),
			}),
		},
	}
}

// workspacePath checks the path argument of a workspace call: relative to
// the workspace, without a ".." element, naming a file in it. The kernel
// checks it again when it is opened (RESOLVE_BENEATH); this gives the
// reason in words first. It returns the path cleaned, slash-separated.
func workspacePath(p string) (string, error) {
	switch {
	case p == "":
		return "", refusal(audit.KindUsage, `"path" is required`)
	case len(p) > maxWorkspacePath:
		return "", refusal(audit.KindUsage, "path is %d bytes, more than %d", len(p), maxWorkspacePath)
	case strings.ContainsRune(p, 0):
		return "", refusal(audit.KindUsage, "path contains a NUL byte")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p):
		return "", refusal(audit.KindUnsafePath, "%s is absolute: give a path relative to the workspace", p)
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == ".." {
			return "", refusal(audit.KindUnsafePath, "%s leaves the workspace (a \"..\" element): give a path inside it", p)
		}
	}
	clean := path.Clean(p)
	if clean == "." {
		return "", refusal(audit.KindUsage, "%s names the workspace itself, not a file in it", p)
	}
	return clean, nil
}

// workspaceGuard refuses what the operator keeps from runs in the
// workspace, so that this tool is no way around it: the built-in deny
// list (unless the policy exempts the path), the policy's deny_read, and
// for a write its deny_write and the files the caller's tools run on
// their own (.git, .envrc, ...; autorun.Inside; a git folder under
// another name, gitDirMade) unless the policy's allow_autorun names the
// workspace.
func (s *Server) workspaceGuard(rel string, write bool) error {
	sb, err := s.sandboxFor(s.cfg.SkillDirs[0], s.cfg.SkillDirs[0], false)
	if err != nil {
		return &fileError{kind: audit.KindPolicy, refused: true, err: err}
	}
	abs := filepath.Join(s.cfg.Workspace, filepath.FromSlash(rel))
	if e := denylist.Entry(abs, run.DefaultDenyPaths(), sb.AllowDenied); e != "" {
		return refusal(audit.KindPolicy, "%s is on the deny list (%s: credentials, keys, history), which runs never see either", rel, e)
	}
	if d, ok := under(abs, sb.DenyPaths); ok {
		return refusal(audit.KindPolicy, "%s is denied by the policy (deny_read %s)", rel, d)
	}
	if !write {
		return nil
	}
	if d, ok := under(abs, sb.ReadOnlyPaths); ok {
		return refusal(audit.KindPolicy, "%s is read-only by the policy (deny_write %s)", rel, d)
	}
	if s.autorunWritable(sb.AutorunWritable) {
		return nil
	}
	if autorun.Inside(rel) {
		return refusal(audit.KindPolicy, "%s is a file the caller's own tools run on their own (git hooks and config, .envrc, editor tasks, ...): runs may not write it, and neither may this tool; an operator policy with allow_autorun naming the workspace lifts this", rel)
	}
	if d := gitDirMade(s.cfg.Workspace, rel); d != "" {
		return refusal(audit.KindPolicy, "%s would make %s a git folder (HEAD beside objects and refs, or commondir), which the caller's git would take for a repository and run its config from, as it would a .git folder's; an operator policy with allow_autorun naming the workspace lifts this", rel, d)
	}
	return nil
}

// autorunWritable reports whether the workspace is among the write
// grants exempted from the auto-run files' protection.
func (s *Server) autorunWritable(paths []string) bool {
	return slices.ContainsFunc(paths, func(p string) bool {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return filepath.Clean(p) == s.cfg.Workspace
	})
}

// under returns the first of dirs that abs is or lies in. Each is
// compared as named and resolved (realpath.Existing): the workspace is
// resolved, and a policy may name a path in it through a link, which
// runs resolve too.
func under(abs string, dirs []string) (string, bool) {
	for _, d := range dirs {
		d = filepath.Clean(d)
		for _, c := range []string{d, realpath.Existing(d)} {
			if abs == c || within(abs, c) {
				return d, true
			}
		}
	}
	return "", false
}

// workspaceWriteCap is the most one write may put in the workspace: the
// workspace's write cap (--write-size, the policy's write_mb), which a
// run may not pass either.
func (s *Server) workspaceWriteCap() int64 {
	sb, err := s.sandboxFor(s.cfg.SkillDirs[0], s.cfg.SkillDirs[0], false)
	mb := sb.WriteMB
	if err != nil || mb <= 0 {
		mb = run.DefaultWriteMB
	}
	return int64(mb) << 20
}

func (s *Server) toolWriteWorkspaceFile(info callInfo, raw json.RawMessage) map[string]any {
	f := audit.File{Workspace: s.cfg.Workspace}
	var a struct {
		Path     string  `json:"path"`
		Content  *string `json:"content"`
		Encoding string  `json:"encoding"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return s.fileDone(info, ToolWriteWorkspaceFile, f, refusal(audit.KindUsage, "%v", err), nil)
	}
	f.Path = a.Path
	rel, err := workspacePath(a.Path)
	if err != nil {
		return s.fileDone(info, ToolWriteWorkspaceFile, f, err, nil)
	}
	if a.Content == nil {
		return s.fileDone(info, ToolWriteWorkspaceFile, f, refusal(audit.KindUsage, `"content" is required`), nil)
	}
	var data []byte
	switch a.Encoding {
	case "", "text":
		data = []byte(*a.Content)
	case "base64":
		if data, err = base64.StdEncoding.DecodeString(*a.Content); err != nil {
			return s.fileDone(info, ToolWriteWorkspaceFile, f, refusal(audit.KindUsage, "content is not base64: %v", err), nil)
		}
	default:
		return s.fileDone(info, ToolWriteWorkspaceFile, f, refusal(audit.KindUsage, `encoding must be "text" or "base64", not %q`, oneLine(a.Encoding, 40)), nil)
	}
	if limit := s.workspaceWriteCap(); int64(len(data)) > limit {
		return s.fileDone(info, ToolWriteWorkspaceFile, f, refusal(audit.KindPolicy, "content is %d bytes, more than the workspace's write cap of %d MiB (--write-size, write_mb)", len(data), limit>>20), nil)
	}
	if err := s.workspaceGuard(rel, true); err != nil {
		return s.fileDone(info, ToolWriteWorkspaceFile, f, err, nil)
	}
	created, err := writeBeneath(s.cfg.Workspace, rel, data)
	if err == nil {
		sum := sha256.Sum256(data)
		f.Size, f.Bytes, f.SHA256, f.Created = int64(len(data)), int64(len(data)), hex.EncodeToString(sum[:]), created
	}
	return s.fileDone(info, ToolWriteWorkspaceFile, f, err, nil)
}

func (s *Server) toolReadWorkspaceFile(info callInfo, raw json.RawMessage) map[string]any {
	f := audit.File{Workspace: s.cfg.Workspace}
	var a struct {
		Path     string `json:"path"`
		Offset   *int64 `json:"offset"`
		MaxBytes *int   `json:"max_bytes"`
		Encoding string `json:"encoding"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return s.fileDone(info, ToolReadWorkspaceFile, f, refusal(audit.KindUsage, "%v", err), nil)
	}
	f.Path = a.Path
	rel, err := workspacePath(a.Path)
	if err != nil {
		return s.fileDone(info, ToolReadWorkspaceFile, f, err, nil)
	}
	max := s.cfg.MaxFileBytes
	switch {
	case a.Offset != nil && *a.Offset < 0:
		return s.fileDone(info, ToolReadWorkspaceFile, f, refusal(audit.KindUsage, "offset must not be negative"), nil)
	case a.MaxBytes != nil && *a.MaxBytes <= 0:
		return s.fileDone(info, ToolReadWorkspaceFile, f, refusal(audit.KindUsage, "max_bytes must be positive"), nil)
	case a.MaxBytes != nil:
		max = min(max, *a.MaxBytes)
	}
	if a.Offset != nil {
		f.Offset = *a.Offset
	}
	if a.Encoding != "" && a.Encoding != "text" && a.Encoding != "base64" {
		return s.fileDone(info, ToolReadWorkspaceFile, f, refusal(audit.KindUsage, `encoding must be "text" or "base64", not %q`, oneLine(a.Encoding, 40)), nil)
	}
	if err := s.workspaceGuard(rel, false); err != nil {
		return s.fileDone(info, ToolReadWorkspaceFile, f, err, nil)
	}
	data, size, err := readBeneath(s.cfg.Workspace, rel, f.Offset, max)
	if err != nil {
		return s.fileDone(info, ToolReadWorkspaceFile, f, err, nil)
	}
	f.Size = size
	encoding := "base64"
	content := ""
	if a.Encoding != "base64" {
		encoding = "text"
		if f.Offset+int64(len(data)) < size {
			read := len(data)
			if data = trimPartialRune(data); len(data) == 0 && read > 0 {
				// Nothing whole fits: a page would not move on.
				return s.fileDone(info, ToolReadWorkspaceFile, f, refusal(audit.KindUsage, "max_bytes %d is less than the UTF-8 character at offset %d of %s: ask for at least %d bytes", read, f.Offset, rel, utf8.UTFMax), nil)
			}
		}
		if !utf8.Valid(data) {
			return s.fileDone(info, ToolReadWorkspaceFile, f, refusal(audit.KindUsage, "%s is not UTF-8 text at offset %d: read it with encoding base64", rel, f.Offset), nil)
		}
		content = string(data)
	} else {
		content = base64.StdEncoding.EncodeToString(data)
	}
	sum := sha256.Sum256(data)
	f.Bytes, f.SHA256 = int64(len(data)), hex.EncodeToString(sum[:])
	f.EOF = f.Offset+f.Bytes >= size
	return s.fileDone(info, ToolReadWorkspaceFile, f, nil, map[string]any{
		"encoding": encoding, "content": content, "next_offset": f.Offset + f.Bytes,
	})
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of a page,
// which the next page then starts with.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// fileDone writes the record of a workspace call and builds its result:
// what was written or read, or the error and its kind, with extra (the
// content of a read) added.
func (s *Server) fileDone(info callInfo, tool string, f audit.File, err error, extra map[string]any) map[string]any {
	event := audit.EventWorkspaceRead
	if tool == ToolWriteWorkspaceFile {
		event = audit.EventWorkspaceWrite
	}
	kind, refused := "", false
	if err != nil {
		kind = audit.KindInternal
		var fe *fileError
		if errors.As(err, &fe) {
			kind, refused = fe.kind, fe.refused
		}
	}
	requestID, _ := audit.NewRequestID()
	rec := audit.NewFileRecord(event, requestID, f, refused, err, kind,
		&audit.MCP{RequestID: string(info.id), Client: info.client.Name, Tool: tool}, s.cfg.Version)
	werr := s.writeFileRecord(rec)
	out := map[string]any{
		"request_id": rec.RequestID, "outcome": rec.Outcome, "path": f.Path,
		"size": f.Size, "bytes": f.Bytes, "sha256": f.SHA256,
	}
	if event == audit.EventWorkspaceWrite {
		out["created"] = f.Created
	} else {
		out["offset"], out["eof"] = f.Offset, f.EOF
	}
	for k, v := range extra {
		out[k] = v
	}
	if err != nil {
		out["error"], out["error_kind"] = err.Error(), kind
	}
	if werr != nil {
		out["error"] = strings.TrimPrefix(fmt.Sprintf("%v; audit record not written: %v", out["error"], werr), "<nil>; ")
	}
	return toolResult(out, err != nil || werr != nil)
}

// writeFileRecord appends a workspace record to the audit log, or writes
// it on the server's log.
func (s *Server) writeFileRecord(rec audit.FileRecord) error {
	if s.cfg.AuditLog != nil {
		return s.cfg.AuditLog.AppendFile(rec)
	}
	if s.cfg.Log == nil {
		return nil
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return audit.WriteFileRecord(s.cfg.Log, rec)
}
