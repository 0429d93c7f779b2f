package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestFileRecord: each kind of workspace record matches the schema, says
// what happened, and a run record's fields are not accepted in it.
func TestFileRecord(t *testing.T) {
	m := &MCP{RequestID: "7", Client: "c", Tool: "write_workspace_file"}
	sum := strings.Repeat("a", 64)
	for _, c := range []struct {
		name, event         string
		f                   File
		refused             bool
		err                 error
		kind                string
		outcome, level, msg string
	}{
		{"write", EventWorkspaceWrite, File{Workspace: "/w", Path: "in/a.txt", Size: 5, Bytes: 5, SHA256: sum, Created: true}, false, nil, "",
			OutcomeCompleted, LevelInfo, "workspace write in/a.txt: 5 bytes"},
		{"read", EventWorkspaceRead, File{Workspace: "/w", Path: "out.txt", Size: 10, Offset: 4, Bytes: 6, SHA256: sum, EOF: true}, false, nil, "",
			OutcomeCompleted, LevelInfo, "workspace read out.txt: 6 bytes from offset 4 of 10"},
		{"refused", EventWorkspaceWrite, File{Workspace: "/w", Path: "../x"}, true, errors.New("leaves the workspace"), KindUnsafePath,
			OutcomeRefused, LevelError, "workspace write ../x refused: leaves the workspace"},
		{"failed", EventWorkspaceRead, File{Workspace: "/w", Path: "gone"}, false, errors.New("no such file"), KindIO,
			OutcomeFailed, LevelError, "workspace read gone failed: no such file"},
		{"not UTF-8", EventWorkspaceRead, File{Workspace: "/w", Path: "a\xff"}, false, nil, "",
			OutcomeCompleted, LevelInfo, `workspace read a\xff: 0 bytes`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := NewFileRecord(c.event, "", c.f, c.refused, c.err, c.kind, m, "test")
			line, err := rec.MarshalLine()
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckLine(line); err != nil {
				t.Fatalf("%v\n%s", err, line)
			}
			var got FileRecord
			if err := json.Unmarshal(line, &got); err != nil {
				t.Fatal(err)
			}
			if got.Outcome != c.outcome || got.Level != c.level || !strings.HasPrefix(got.Message, c.msg) || got.SchemaVersion != SchemaVersion || len(got.RequestID) != 32 {
				t.Errorf("record %s", line)
			}
			if c.err != nil && (got.ErrorKind != c.kind || got.Error != c.err.Error()) {
				t.Errorf("error %q kind %q", got.Error, got.ErrorKind)
			}
			if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
				t.Errorf("not one line: %q", line)
			}
		})
	}
	// A workspace record with a run record's field, or without its file,
	// matches neither branch.
	line, _ := NewFileRecord(EventWorkspaceWrite, "", File{Path: "a"}, false, nil, "", nil, "test").MarshalLine()
	for _, bad := range []func(map[string]any){
		func(m map[string]any) { m["exit_code"] = 0 },
		func(m map[string]any) { delete(m, "file") },
		func(m map[string]any) { m["event"] = "workspace.delete" },
		func(m map[string]any) { m["file"].(map[string]any)["sha256"] = "xyz" },
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

// TestLogAppendFile: the log takes workspace records as whole lines.
func TestLogAppendFile(t *testing.T) {
	path := t.TempDir() + "/audit.jsonl"
	l, err := OpenLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 2 {
		if err := l.AppendFile(NewFileRecord(EventWorkspaceRead, "", File{Path: "x"}, false, nil, "", nil, "test")); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for _, line := range lines {
		if err := CheckLine([]byte(line)); err != nil {
			t.Error(err)
		}
	}
	if len(lines) != 2 {
		t.Errorf("%d lines, want 2", len(lines))
	}
	var buf bytes.Buffer
	if err := WriteFileRecord(&buf, NewFileRecord(EventWorkspaceRead, "", File{Path: "x"}, false, nil, "", nil, "test")); err != nil || CheckLine(buf.Bytes()) != nil {
		t.Errorf("WriteFileRecord: %v %s", err, buf.Bytes())
	}
}
