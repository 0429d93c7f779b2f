package mcp

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// TestRevisions negotiates each handshake revision and checks that every
// answer has exactly the fields of that revision: no annotations before
// 2025-03-26, no title, outputSchema or structuredContent before
// 2025-06-18, no server description before 2025-11-25.
func TestRevisions(t *testing.T) {
	for _, tc := range []struct {
		asked, got   string
		toolKeys     string // keys of a tools/list entry with an output schema
		callKeys     string // keys of a tools/call result
		serverKeys   string // keys of serverInfo
		annotations  bool
		annotatedRun string // run_skill_script's annotations, as JSON
	}{
		{"2024-11-05", "2024-11-05", "description,inputSchema,name", "content,isError", "name,version", false, ""},
		{"2025-03-26", "2025-03-26", "annotations,description,inputSchema,name", "content,isError", "name,version", true,
			`{"title":"Run a skill's script","readOnlyHint":false,"destructiveHint":false,"idempotentHint":false}`},
		{"2025-06-18", "2025-06-18", "annotations,description,inputSchema,name,outputSchema,title", "content,isError,structuredContent", "name,title,version", true, ""},
		{"2025-11-25", "2025-11-25", "annotations,description,inputSchema,name,outputSchema,title", "content,isError,structuredContent", "description,name,title,version", true, ""},
		// Not a revision, or not one with a handshake: the newest
		// handshake revision.
		{"2024-10-07", VersionLegacy, "annotations,description,inputSchema,name,outputSchema,title", "content,isError,structuredContent", "description,name,title,version", true, ""},
		{"2026-07-28", VersionLegacy, "annotations,description,inputSchema,name,outputSchema,title", "content,isError,structuredContent", "description,name,title,version", true, ""},
	} {
		t.Run(tc.asked, func(t *testing.T) {
			c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
			r := c.request("initialize", map[string]any{
				"protocolVersion": tc.asked, "capabilities": map[string]any{},
				"clientInfo": map[string]any{"name": "rev", "version": "1"},
			})
			if got := dig(r, "result", "protocolVersion"); got != tc.got {
				t.Fatalf("asked %s, got %v, want %s", tc.asked, got, tc.got)
			}
			if got := keys(dig(r, "result", "serverInfo")); got != tc.serverKeys {
				t.Errorf("serverInfo keys %s, want %s", got, tc.serverKeys)
			}
			l := c.request("tools/list", nil)
			run := dig(l, "result", "tools", 3)
			if dig(run, "name") != ToolRunScript {
				t.Fatalf("tools/list: %v", l)
			}
			if got := keys(run); got != tc.toolKeys {
				t.Errorf("tool keys %s, want %s", got, tc.toolKeys)
			}
			for i := range 5 {
				if a := dig(l, "result", "tools", i, "annotations"); (a != nil) != tc.annotations {
					t.Errorf("tool %d annotations %v", i, a)
				}
			}
			if tc.annotatedRun != "" {
				b, _ := json.Marshal(dig(run, "annotations"))
				var want any
				json.Unmarshal([]byte(tc.annotatedRun), &want)
				wb, _ := json.Marshal(want)
				if string(b) != string(wb) {
					t.Errorf("run_skill_script annotations %s, want %s", b, wb)
				}
				if got := dig(l, "result", "tools", 0, "annotations", "readOnlyHint"); got != true {
					t.Errorf("list_skills readOnlyHint %v", got)
				}
			}
			call := c.call(ToolListSkills, map[string]any{})
			if got := keys(call); got != tc.callKeys {
				t.Errorf("tools/call keys %s, want %s", got, tc.callKeys)
			}
			if text, _ := dig(call, "content", 0, "text").(string); !strings.Contains(text, `"probe"`) {
				t.Errorf("text content %q", text)
			}
		})
	}
}

// TestRevisionWorkspaceHints: with a workspace the run tools may change
// files that outlive the run, and say so.
func TestRevisionWorkspaceHints(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Workspace: t.TempDir()})
	c.initialize()
	l := c.request("tools/list", nil)
	for _, i := range []int{3, 4} {
		if dig(l, "result", "tools", i, "annotations", "readOnlyHint") != false || dig(l, "result", "tools", i, "annotations", "destructiveHint") != true {
			t.Errorf("tool %v annotations %v", dig(l, "result", "tools", i, "name"), dig(l, "result", "tools", i, "annotations"))
		}
	}
}

// keys lists the keys of a JSON object, sorted, comma-separated.
func keys(v any) string {
	m, _ := v.(map[string]any)
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// TestBatches: JSON-RPC batches are served on a 2025-03-26 connection
// (each member answered, in one array; notifications not; members
// invalid on their own answered with their error) and refused with one
// -32600 in every other revision and before initialize.
func TestBatches(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":"a","method":"ping"},` +
		`{"jsonrpc":"2.0","method":"notifications/initialized"},` +
		`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"list_skills"}},` +
		`{"jsonrpc":"2.0","id":"c","method":"no/such"},` +
		`{"jsonrpc":"2.0","id":"d","method":"initialize","params":{"protocolVersion":"2025-03-26"}},` +
		`5,[],` +
		`{"jsonrpc":"2.0","id":"e","result":{}}]`
	t.Run("2025-03-26", func(t *testing.T) {
		c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
		c.request("initialize", map[string]any{"protocolVersion": VersionBatch, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "b"}})
		c.sendLine(batch)
		if !c.out.Scan() {
			t.Fatal("no response")
		}
		var got []map[string]any
		if err := json.Unmarshal(c.out.Bytes(), &got); err != nil {
			t.Fatalf("not an array: %v: %s", err, c.out.Bytes())
		}
		byID := map[any]map[string]any{}
		nulls := 0
		for _, r := range got {
			if r["id"] == nil {
				nulls++
				if dig(r, "error", "code") != float64(CodeInvalidRequest) {
					t.Errorf("invalid member answered %v", r)
				}
				continue
			}
			byID[r["id"]] = r
		}
		if len(got) != 6 || nulls != 2 {
			t.Fatalf("%d responses (%d without id), want 6 (2): %s", len(got), nulls, c.out.Bytes())
		}
		if r := byID["a"]; r == nil || r["result"] == nil {
			t.Errorf("ping: %v", r)
		}
		if r := byID["b"]; dig(r, "result", "isError") != false || dig(r, "result", "structuredContent") != nil {
			t.Errorf("tools/call in 2025-03-26: %v", r)
		}
		if r := byID["c"]; dig(r, "error", "code") != float64(CodeMethodNotFound) {
			t.Errorf("unknown method: %v", r)
		}
		if r := byID["d"]; dig(r, "error", "code") != float64(CodeInvalidRequest) {
			t.Errorf("initialize in a batch: %v", r)
		}
		// Only notifications: no response at all; the next line answered
		// is the ping after it.
		c.sendLine(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
		for _, tc := range []struct{ line, want string }{
			{`[]`, "empty batch"},
			{`[{"jsonrpc":"2.0","id":1,"method":"ping"}`, "not valid JSON"},
		} {
			c.sendLine(tc.line)
			r := c.read()
			if msg, _ := dig(r, "error", "message").(string); !strings.Contains(msg, tc.want) || r["id"] != nil {
				t.Errorf("%s: %v", tc.line, r)
			}
		}
		if r := c.request("ping", nil); r["result"] == nil {
			t.Errorf("ping after the batches: %v", r)
		}
	})
	for _, rev := range []string{"", VersionFirst, "2025-06-18", VersionLegacy} {
		name := rev
		if name == "" {
			name = "before initialize"
		}
		t.Run(name, func(t *testing.T) {
			c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
			if rev != "" {
				c.request("initialize", map[string]any{"protocolVersion": rev, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "b"}})
			}
			c.sendLine(batch)
			r := c.read()
			if dig(r, "error", "code") != float64(CodeInvalidRequest) || r["id"] != nil {
				t.Fatalf("batch answered %v", r)
			}
			if msg, _ := dig(r, "error", "message").(string); !strings.Contains(msg, VersionBatch) {
				t.Errorf("message %q does not name %s", msg, VersionBatch)
			}
			// Nothing of the batch ran: the next response is the ping's.
			if r := c.request("ping", nil); r["result"] == nil {
				t.Errorf("ping: %v", r)
			}
		})
	}
}
