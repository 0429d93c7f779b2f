package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// MarshalLine returns the record as one line of JSON ending in "\n", at
// most MaxLineBytes long. Long free-form fields are cut first (see
// docs/audit.md); if the line is still too long, trailing args are dropped
// and args_truncated is set. HTML characters are not escaped. Fields that
// are not valid UTF-8 (file names in another encoding) are written with
// their stray bytes as \xNN and backslashes doubled, never as U+FFFD.
func (r Record) MarshalLine() ([]byte, error) {
	if len(r.Layers.Missing) > 0 { // escapeNames writes to it: a copy
		r.Layers.Missing = append([]MissingLayer(nil), r.Layers.Missing...)
	}
	r.escapeNames()
	r.capFields()
	line, err := marshal(r)
	if err != nil || len(line) <= MaxLineBytes {
		return line, err
	}
	// Too long: first list fewer connections (the totals keep counting
	// them), then keep as many leading args as fit.
	for len(line) > MaxLineBytes && len(r.Network.Connections) > 0 {
		r.Network.Connections = r.Network.Connections[:len(r.Network.Connections)/2]
		r.Network.ConnectionsTruncated = true
		if line, err = marshal(r); err != nil {
			return nil, err
		}
	}
	if len(line) <= MaxLineBytes {
		return line, nil
	}
	// Too long: keep as many leading args as fit in what the rest leaves.
	args := r.Args
	r.Args = []string{}
	base, err := marshal(r)
	if err != nil {
		return nil, err
	}
	if len(base) > MaxLineBytes {
		// Only escaping-heavy paths or messages get here: shorten them all.
		r.shorten()
		if base, err = marshal(r); err != nil {
			return nil, err
		}
	}
	budget := MaxLineBytes - len(base)
	kept := make([]string, 0, len(args))
	for _, a := range args {
		enc, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		cost := len(enc) + 1 // the comma
		if cost > budget {
			break
		}
		budget -= cost
		kept = append(kept, a)
	}
	r.Args = kept
	r.ArgsTruncated = r.ArgsTruncated || len(kept) < len(args)
	return marshal(r)
}

// capFields applies the per-field size caps.
func (r *Record) capFields() {
	r.capGrants(maxGrantPaths, maxArtifactFiles, maxGrantPathLen)
	r.Message = truncate(r.Message, maxMessageBytes)
	r.Skill.Name = truncate(r.Skill.Name, maxNameBytes)
	r.Signature.Principal = truncate(r.Signature.Principal, maxNameBytes)
	r.Skill.Path = truncate(r.Skill.Path, maxPathBytes)
	r.Skill.DigestError = truncate(r.Skill.DigestError, maxErrorBytes)
	r.Script = truncate(r.Script, maxPathBytes)
	r.WorkDir = truncate(r.WorkDir, maxPathBytes)
	r.PolicySources = capSources(r.PolicySources, maxPathBytes)
	r.Error = truncate(r.Error, maxErrorBytes)
	r.Host = truncate(r.Host, maxNameBytes)
	r.Tool.Version = truncate(r.Tool.Version, maxNameBytes)
	if r.MCP != nil {
		m := *r.MCP // a copy: the caller's value is not touched
		m.RequestID = truncate(m.RequestID, maxNameBytes)
		m.Client = truncate(m.Client, maxNameBytes)
		m.Tool = truncate(m.Tool, maxNameBytes)
		r.MCP = &m
	}
	if len(r.Interpreter) > maxInterpreter {
		r.Interpreter = r.Interpreter[:maxInterpreter]
	}
	r.Interpreter = truncateAll(r.Interpreter, maxPathBytes)
	if len(r.Args) > maxArgs {
		r.Args = r.Args[:maxArgs]
		r.ArgsTruncated = true
	}
	for _, a := range r.Args {
		if len(a) > maxArgBytes {
			r.ArgsTruncated = true
			break
		}
	}
	r.Args = truncateAll(r.Args, maxArgBytes) // a copy: the caller's slice is not touched
	r.Network.capNetwork()
}

// shorten cuts every free-form field to shortStringBytes; the last resort
// of MarshalLine.
func (r *Record) shorten() {
	r.capGrants(shortGrantPaths, shortGrantPaths, shortStringBytes)
	r.Message = truncate(r.Message, shortStringBytes)
	r.Skill.Path = truncate(r.Skill.Path, shortStringBytes)
	r.Signature.Principal = truncate(r.Signature.Principal, shortStringBytes)
	r.Skill.DigestError = truncate(r.Skill.DigestError, shortStringBytes)
	r.Script = truncate(r.Script, shortStringBytes)
	r.WorkDir = truncate(r.WorkDir, shortStringBytes)
	r.PolicySources = capSources(r.PolicySources, shortStringBytes)
	r.Error = truncate(r.Error, shortStringBytes)
	r.Interpreter = truncateAll(r.Interpreter, shortStringBytes)
	r.Validation.Errors = truncateAll(r.Validation.Errors, shortStringBytes)
	r.Validation.Warnings = truncateAll(r.Validation.Warnings, shortStringBytes)
	missing := make([]MissingLayer, len(r.Layers.Missing))
	for i, m := range r.Layers.Missing {
		missing[i] = MissingLayer{Layer: m.Layer, Reason: truncate(m.Reason, shortStringBytes)}
	}
	r.Layers.Missing = missing
}

// marshal returns the line of r: its JSON object (see appendRecord) and a
// newline.
func marshal(r Record) ([]byte, error) {
	line, err := appendRecord(make([]byte, 0, 2048), &r)
	if err != nil {
		return nil, fmt.Errorf("audit record: %w", err)
	}
	return escapeC1(append(line, '\n')), nil
}

// escapeC1 writes DEL and the C1 controls (U+007F-U+009F), which JSON
// encoding leaves raw (appendString as encoding/json), as \u escapes: the
// record of audit goes to the caller's stderr, often a terminal, and a
// name from the skill holding U+009B (CSI) or U+009D (OSC) would reach it
// as a control sequence. They can only occur inside JSON strings, where
// the escape decodes to the same character.
func escapeC1(line []byte) []byte {
	if !bytes.ContainsFunc(line, func(r rune) bool { return r >= 0x7f && r <= 0x9f }) {
		return line
	}
	out := make([]byte, 0, len(line)+16)
	for _, r := range string(line) {
		if r >= 0x7f && r <= 0x9f {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = utf8.AppendRune(out, r)
		}
	}
	return out
}

// Write writes the record as one line to w with a single Write call. Use it
// for streams such as stderr; use Append for a file that concurrent runs
// share.
func Write(w io.Writer, rec Record) error {
	line, err := rec.MarshalLine()
	if err != nil {
		return err
	}
	return writeLine(w, line)
}

// writeLine writes one marshalled record to w.
func writeLine(w io.Writer, line []byte) error {
	if _, err := w.Write(line); err != nil {
		return fmt.Errorf("writing audit record: %w", err)
	}
	return nil
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence,
// marking the cut with "...".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "..."
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func truncateAll(ss []string, n int) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = truncate(s, n)
	}
	return out
}

// capSources returns a copy of ss with each path cut to n bytes.
func capSources(ss []PolicySource, n int) []PolicySource {
	if ss == nil {
		return nil
	}
	out := make([]PolicySource, len(ss))
	for i, s := range ss {
		out[i] = PolicySource{Role: s.Role, Path: truncate(s.Path, n)}
	}
	return out
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
