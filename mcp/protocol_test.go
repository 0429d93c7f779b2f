package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/jsonkeys"
)

// TestFraming sends malformed and invalid messages and checks each error
// code, and that the server keeps serving after each.
func TestFraming(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, MaxMessageBytes: 4096})
	c.nextID = 1000 // the client's own ids stay clear of the ones below
	for _, tc := range framingCases() {
		t.Run(tc.name, func(t *testing.T) {
			c.sendLine(tc.line)
			r := c.read()
			if got := dig(r, "error", "code"); got != tc.code {
				t.Errorf("error code %v, want %v: %v", got, tc.code, r)
			}
			if r["id"] != tc.id {
				t.Errorf("id %v, want %v", r["id"], tc.id)
			}
			if r["jsonrpc"] != "2.0" {
				t.Errorf("jsonrpc %v", r["jsonrpc"])
			}
			// Still serving.
			if p := c.request("ping", nil); p["result"] == nil {
				t.Fatalf("ping after %s: %v", tc.name, p)
			}
		})
	}
	// Notifications and responses get no reply, even when wrong.
	c.sendLine(`{"jsonrpc":"2.0","method":"notifications/unknown"}`)
	c.sendLine(`{"jsonrpc":"2.0","id":99,"result":{}}`)
	c.sendLine(``)
	if p := c.request("ping", nil); p["result"] == nil || p["id"] == float64(99) {
		t.Fatalf("ping: %v", p)
	}
}

// framingCase is a message the server refuses, the error code it gets
// and the id of the response (nil: null).
type framingCase struct {
	name, line string
	code       float64
	id         any
}

// framingCases are the refused messages of TestFraming and
// TestRefusedRecorded, for a server with MaxMessageBytes 4096.
func framingCases() []framingCase {
	return []framingCase{
		{"not JSON", `{"jsonrpc":"2.0","id":1,"method":`, CodeParseError, nil},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, CodeParseError, nil},
		{"bare string", `"hello"`, CodeInvalidRequest, nil},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest, nil},
		{"no jsonrpc", `{"id":7,"method":"ping"}`, CodeInvalidRequest, float64(7)},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":8,"method":"ping"}`, CodeInvalidRequest, float64(8)},
		{"method not a string", `{"jsonrpc":"2.0","id":9,"method":5}`, CodeInvalidRequest, float64(9)},
		{"no method", `{"jsonrpc":"2.0","id":10}`, CodeInvalidRequest, float64(10)},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, nil},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, CodeInvalidRequest, nil},
		{"params array", `{"jsonrpc":"2.0","id":11,"method":"tools/list","params":[]}`, CodeInvalidParams, float64(11)},
		{"unknown method", `{"jsonrpc":"2.0","id":12,"method":"prompts/list"}`, CodeMethodNotFound, float64(12)},
		{"oversized", `{"jsonrpc":"2.0","id":13,"method":"ping","params":{"x":"` + strings.Repeat("a", 10000) + `"}}`, CodeInvalidRequest, nil},
		{"tools/call without name", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{}}`, CodeInvalidParams, float64(14)},
		{"tools/call arguments not object", `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"list_skills","arguments":[1]}}`, CodeInvalidParams, float64(15)},
		{"unknown tool", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}`, CodeInvalidParams, float64(16)},
		{"initialize without version", `{"jsonrpc":"2.0","id":17,"method":"initialize","params":{}}`, CodeInvalidParams, float64(17)},
		// Keys encoding/json would take for one: never the last one silently.
		{"script twice", `{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"run_skill_script","arguments":{"skill":"word-stats","script":"stats.py","script":"evil.py"}}}`, CodeInvalidRequest, float64(18)},
		{"script in another case", `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"run_skill_script","arguments":{"skill":"word-stats","script":"stats.py","Script":"evil.py"}}}`, CodeInvalidRequest, float64(19)},
		{"command in another case", `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"run_command","arguments":{"command":["true"],"COMMAND":["false"]}}}`, CodeInvalidRequest, float64(20)},
		{"tool name twice", `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"list_skills","name":"run_command","arguments":{}}}`, CodeInvalidRequest, float64(21)},
		{"method twice", `{"jsonrpc":"2.0","id":22,"method":"ping","Method":"tools/call"}`, CodeInvalidRequest, float64(22)},
		{"id twice", `{"jsonrpc":"2.0","id":23,"ID":24,"method":"ping"}`, CodeInvalidRequest, nil},
		// One key that only folds to a field's name: a client reading
		// the key exactly sees none.
		{"method in another case", `{"jsonrpc":"2.0","id":25,"Method":"ping"}`, CodeInvalidRequest, float64(25)},
		{"tool name in another case", `{"jsonrpc":"2.0","id":26,"method":"tools/call","params":{"NAME":"list_skills","arguments":{}}}`, CodeInvalidParams, float64(26)},
	}
}

// TestLegacyEra walks the 2025-11-25 lifecycle.
func TestLegacyEra(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
	r := c.request("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "old", "version": "1"},
	})
	if got := dig(r, "result", "protocolVersion"); got != "2025-06-18" {
		t.Errorf("2025-06-18 not kept: %v", got)
	}
	c.sendLine(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c = newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
	r = c.request("initialize", map[string]any{"protocolVersion": "2099-01-01", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x"}})
	if got := dig(r, "result", "protocolVersion"); got != VersionLegacy {
		t.Errorf("unknown version answered with %v, want %s", got, VersionLegacy)
	}
	if dig(r, "result", "capabilities", "tools") == nil || dig(r, "result", "serverInfo", "name") != "skill-sandbox" {
		t.Errorf("initialize result: %v", r)
	}
	c.sendLine(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if r := c.request("ping", nil); r["result"] == nil {
		t.Errorf("ping: %v", r)
	}
	r = c.request("tools/list", nil)
	tools, _ := dig(r, "result", "tools").([]any)
	var names []string
	for _, tl := range tools {
		names = append(names, dig(tl, "name").(string))
		if dig(tl, "inputSchema", "type") != "object" {
			t.Errorf("tool %v: inputSchema %v", dig(tl, "name"), dig(tl, "inputSchema"))
		}
	}
	want := []string{ToolListSkills, ToolReadSkill, ToolReadSkillFile, ToolRunScript, ToolRunCommand}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("tools %v, want %v", names, want)
	}
	if _, ok := dig(r, "result").(map[string]any)["resultType"]; ok {
		t.Error("handshake-era result has resultType")
	}
}

// TestStatelessEra walks the 2026-07-28 protocol: no handshake,
// server/discover, _meta on every request, resultType in results.
func TestStatelessEra(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
	r := c.request("server/discover", map[string]any{"_meta": statelessMeta()})
	if got := dig(r, "result", "resultType"); got != "complete" {
		t.Errorf("discover resultType %v: %v", got, r)
	}
	if vs, _ := dig(r, "result", "supportedVersions").([]any); len(vs) == 0 || vs[0] != VersionStateless {
		t.Errorf("supportedVersions %v", vs)
	}
	first := c.request("tools/list", map[string]any{"_meta": statelessMeta()})
	if dig(first, "result", "resultType") != "complete" {
		t.Errorf("tools/list: %v", first)
	}
	second := c.request("tools/list", map[string]any{"_meta": statelessMeta()})
	a, _ := json.Marshal(first["result"])
	b, _ := json.Marshal(second["result"])
	if !bytes.Equal(a, b) {
		t.Error("tools/list differs between two calls")
	}
	res := c.request("tools/call", map[string]any{"_meta": statelessMeta(), "name": ToolRunScript,
		"arguments": map[string]any{"skill": "probe", "script": "echo.sh", "args": []string{"a", "b"}, "stdin": "in"}})
	if dig(res, "result", "resultType") != "complete" || dig(res, "result", "isError") != false {
		t.Fatalf("tools/call: %v", res)
	}
	if got := dig(res, "result", "structuredContent", "stdout", "text"); got != "args:a b\nin" {
		t.Errorf("stdout %q", got)
	}
	c.close()
	recs := records(t, c.log.String())
	if len(recs) != 1 || recs[0].MCP == nil || recs[0].MCP.Client != "go-test-stateless" || recs[0].MCP.Tool != ToolRunScript {
		t.Errorf("records: %+v", recs)
	}

	// Errors of the stateless era.
	c = newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
	for _, tc := range []struct {
		name string
		meta map[string]any
		code float64
	}{
		{"unsupported version", map[string]any{metaProtocolVersion: "2030-01-01", metaClientCapabilities: map[string]any{}}, CodeUnsupportedVersion},
		{"version not a string", map[string]any{metaProtocolVersion: 5, metaClientCapabilities: map[string]any{}}, CodeInvalidParams},
		{"no capabilities", map[string]any{metaProtocolVersion: VersionStateless}, CodeInvalidParams},
		{"capabilities not an object", map[string]any{metaProtocolVersion: VersionStateless, metaClientCapabilities: "all"}, CodeInvalidParams},
	} {
		r := c.request("tools/list", map[string]any{"_meta": tc.meta})
		if got := dig(r, "error", "code"); got != tc.code {
			t.Errorf("%s: code %v, want %v: %v", tc.name, got, tc.code, r)
		}
		if tc.code == CodeUnsupportedVersion {
			if vs, _ := dig(r, "error", "data", "supported").([]any); len(vs) == 0 {
				t.Errorf("%s: no supported versions in data: %v", tc.name, r)
			}
		}
	}
}

// TestLineReader checks the size cap and that memory stays bounded by it
// while an oversized line is skipped.
func TestLineReader(t *testing.T) {
	in := "short\r\n" + strings.Repeat("x", 1<<20) + "\nafter\nlast"
	lr := newLineReader(strings.NewReader(in), 100)
	var got []string
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errTooLong) {
			got = append(got, "TOO LONG")
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(line))
	}
	if want := "short|TOO LONG|after|last"; strings.Join(got, "|") != want {
		t.Errorf("lines %q, want %q", strings.Join(got, "|"), want)
	}
}

// TestWriteErrorStops checks that a server whose output is gone stops.
func TestWriteErrorStops(t *testing.T) {
	srv, err := NewServer(Config{SkillDirs: []string{skillsDir(t)}})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	outR.Close()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), inR, outW) }()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	if err := <-done; err == nil {
		t.Error("Serve returned nil after its output was closed")
	}
	inW.Close()
}

// TestPing checks ping in both eras: an empty result in the handshake
// era, before and after initialize and whatever _meta a 2025 client adds;
// in the 2026-07-28 era (which dropped ping; it is still answered, so that
// keep-alive probes of either kind of client work) the result carries
// resultType "complete", and the per-request _meta is checked as for any
// other method.
func TestPing(t *testing.T) {
	stateless := func(meta map[string]any) map[string]any { return map[string]any{"_meta": meta} }
	for _, tc := range []struct {
		name      string
		initFirst bool
		params    any
		result    string // the result as JSON; "" when an error is expected
		code      float64
	}{
		{"before initialize", false, nil, `{}`, 0},
		{"after initialize", true, nil, `{}`, 0},
		{"after initialize, empty params", true, map[string]any{}, `{}`, 0},
		{"after initialize, progress token", true, map[string]any{"_meta": map[string]any{"progressToken": "p1"}}, `{}`, 0},
		{"stateless", false, stateless(statelessMeta()), `{"resultType":"complete"}`, 0},
		{"stateless after a handshake", true, stateless(statelessMeta()), `{"resultType":"complete"}`, 0},
		{"stateless without capabilities", false, stateless(map[string]any{metaProtocolVersion: VersionStateless}), "", CodeInvalidParams},
		{"stateless, unknown version", false, stateless(map[string]any{metaProtocolVersion: "2027-01-01", metaClientCapabilities: map[string]any{}}), "", CodeUnsupportedVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
			if tc.initFirst {
				c.initialize()
			}
			r := c.request("ping", tc.params)
			if tc.result == "" {
				if got := dig(r, "error", "code"); got != tc.code || r["result"] != nil {
					t.Errorf("got %v, want error %v", r, tc.code)
				}
				return
			}
			got, _ := json.Marshal(r["result"])
			if string(got) != tc.result || r["error"] != nil {
				t.Errorf("result %s (response %v), want %s", got, r, tc.result)
			}
		})
	}
}

// TestSecondInitialize: the handshake happens once per connection. A
// second initialize is refused and leaves the negotiated revision as it
// was; an initialize refused for its params does not count.
func TestSecondInitialize(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
	if r := c.request("initialize", map[string]any{}); dig(r, "error", "code") != float64(CodeInvalidParams) {
		t.Fatalf("initialize without params: %v", r)
	}
	r := c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "first"}})
	if got := dig(r, "result", "protocolVersion"); got != "2025-06-18" {
		t.Fatalf("first initialize: %v", r)
	}
	for _, rev := range []string{VersionFirst, "2025-06-18", VersionLegacy} {
		r := c.request("initialize", map[string]any{"protocolVersion": rev, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "second"}})
		msg, _ := dig(r, "error", "message").(string)
		if dig(r, "error", "code") != float64(CodeInvalidRequest) || r["id"] == nil || !strings.Contains(msg, "already initialized (protocol revision 2025-06-18)") {
			t.Errorf("second initialize asking %s: %v", rev, r)
		}
	}
	// Still 2025-06-18: tools have titles (not in 2024-11-05) and
	// serverInfo has no description (2025-11-25).
	l := c.request("tools/list", nil)
	if dig(l, "result", "tools", 0, "title") == nil {
		t.Errorf("tools/list after a refused initialize lost the negotiated revision: %v", l)
	}
	if p := c.request("ping", nil); p["result"] == nil {
		t.Errorf("ping: %v", p)
	}
}

// TestKeyFlood: a message with more object keys, or nested deeper, than
// the duplicate-key check examines is refused with the limit it passed,
// its id kept, and the server goes on.
func TestKeyFlood(t *testing.T) {
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}})
	var keys strings.Builder
	for i := range jsonkeys.DefaultMaxKeys {
		fmt.Fprintf(&keys, `"k%d":0,`, i)
	}
	for _, tc := range []struct{ name, line, want string }{
		{"keys", `{"jsonrpc":"2.0","id":"flood","method":"ping","params":{` + strings.TrimSuffix(keys.String(), ",") + `}}`,
			fmt.Sprintf("more than %d object keys", jsonkeys.DefaultMaxKeys)},
		{"depth", `{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`,
			fmt.Sprintf("nest more than %d deep", jsonkeys.DefaultMaxDepth)},
	} {
		c.sendLine(tc.line)
		r := c.read()
		msg, _ := dig(r, "error", "message").(string)
		if dig(r, "error", "code") != float64(CodeInvalidRequest) || r["id"] == nil || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %v", tc.name, r)
		}
	}
	if p := c.request("ping", nil); p["result"] == nil {
		t.Errorf("ping after the floods: %v", p)
	}
}
