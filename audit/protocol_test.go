package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestProtocolRecord: refused-request records match the schema, say what
// was refused, keep the client's free text bounded and escaped, and are
// not taken for another shape.
func TestProtocolRecord(t *testing.T) {
	for _, c := range []struct {
		name   string
		p      Protocol
		reason string
		m      MCP
		check  func(r ProtocolRecord) bool
	}{
		{"parse error", Protocol{Code: -32700, Bytes: 12}, "parse error: the message is not valid JSON", MCP{},
			func(r ProtocolRecord) bool {
				return r.Message == "mcp request null refused (-32700): parse error: the message is not valid JSON"
			}},
		{"unknown method", Protocol{Method: "resources/list", Code: -32601, Bytes: 50}, `method not found: "resources/list"`, MCP{RequestID: "12", Client: "c"},
			func(r ProtocolRecord) bool { return r.Protocol.Method == "resources/list" && r.MCP.RequestID == "12" }},
		{"coalesced", Protocol{Code: -32600, Suppressed: 99}, "invalid request", MCP{RequestID: `"a"`},
			func(r ProtocolRecord) bool { return strings.Contains(r.Message, "and 99 refused requests before it") }},
		{"hostile text", Protocol{Method: strings.Repeat("m\xff", 500), Code: -32601}, "x\x1b[2J\u0085y", MCP{RequestID: `"\u009b"`, Client: "a\xffb"},
			func(r ProtocolRecord) bool {
				return len(r.Protocol.Method) <= maxMethodBytes+3 && strings.Contains(r.Protocol.Method, `\xff`) && r.MCP.Client == `a\xffb`
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			line, err := NewProtocolRecord("", c.p, c.reason, c.m, "test").MarshalLine()
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckLine(line); err != nil {
				t.Fatalf("%v\n%s", err, line)
			}
			if bytes.Count(line, []byte("\n")) != 1 || bytes.ContainsAny(line, "\x1b") || bytes.Contains(line, []byte("\u0085")) {
				t.Errorf("not one clean line: %q", line)
			}
			var r ProtocolRecord
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			if r.Event != EventRefused || r.Outcome != OutcomeRefused || r.ErrorKind != KindProtocol || r.Level != LevelWarn ||
				r.SchemaVersion != SchemaVersion || len(r.RequestID) != 32 || !c.check(r) {
				t.Errorf("record %s", line)
			}
		})
	}
	line, _ := NewProtocolRecord("", Protocol{Code: -32700}, "x", MCP{}, "test").MarshalLine()
	for _, bad := range []func(map[string]any){
		func(m map[string]any) { m["exit_code"] = 0 },
		func(m map[string]any) { m["file"] = map[string]any{} },
		func(m map[string]any) { delete(m, "protocol") },
		func(m map[string]any) { m["outcome"] = "completed" },
		func(m map[string]any) { m["protocol"].(map[string]any)["suppressed"] = -1 },
	} {
		var m map[string]any
		json.Unmarshal(line, &m)
		bad(m)
		b, _ := json.Marshal(m)
		if err := CheckLine(b); !errors.Is(err, ErrSchema) {
			t.Errorf("accepted %s", b)
		}
	}
}

// TestLogAppendProtocol: the log takes refused-request records as whole
// lines.
func TestLogAppendProtocol(t *testing.T) {
	path := t.TempDir() + "/audit.jsonl"
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.AppendProtocol(NewProtocolRecord("", Protocol{Code: -32700}, "x", MCP{}, "test")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLine(data); err != nil {
		t.Error(err)
	}
}
