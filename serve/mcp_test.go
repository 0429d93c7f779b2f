package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// mcpPost sends one MCP message to /mcp with token tok and session sid
// ("" for none) and returns the status, the session id answered and the
// JSON-RPC message.
func (f *fixture) mcpPost(t *testing.T, tok, sid, body string) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequest("POST", f.ts.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var msg map[string]any
	json.Unmarshal(data, &msg)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), msg
}

const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"serve-test","version":"1"}}}`

// TestMCPPerTenant checks the MCP endpoint: no token, no access; each
// tenant sees its own skills only, over the tools and the Skills
// extension; a session is its tenant's alone.
func TestMCPPerTenant(t *testing.T) {
	f := newFixture(t, nil)
	if status, _, _ := f.mcpPost(t, "", "", mcpInit); status != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", status)
	}
	status, sidA, msg := f.mcpPost(t, tokenA, "", mcpInit)
	if status != 200 || len(sidA) != 32 {
		t.Fatalf("initialize: %d %q %v", status, sidA, msg)
	}
	list := func(tok, sid string) string {
		_, _, msg := f.mcpPost(t, tok, sid, `{"jsonrpc":"2.0","id":2,"method":"skills/list"}`)
		b, _ := json.Marshal(msg["result"])
		return string(b)
	}
	if got := list(tokenA, sidA); !strings.Contains(got, "skill://alpha/SKILL.md") || strings.Contains(got, "beta") {
		t.Errorf("team-a skills/list: %s", got)
	}
	// team-b's token with team-a's session: unknown there.
	if status, _, msg := f.mcpPost(t, tokenB, sidA, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); status != http.StatusNotFound {
		t.Errorf("team-b with team-a's session: %d %v, want 404", status, msg)
	}
	_, sidB, _ := f.mcpPost(t, tokenB, "", mcpInit)
	if got := list(tokenB, sidB); !strings.Contains(got, "skill://beta/SKILL.md") || strings.Contains(got, "alpha") {
		t.Errorf("team-b skills/list: %s", got)
	}
	for _, uri := range []string{"skill://alpha/SKILL.md", "skill://alpha/scripts/echo.sh"} {
		_, _, msg := f.mcpPost(t, tokenB, sidB, `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"`+uri+`"}}`)
		if msg["error"] == nil {
			t.Errorf("team-b read %s: %v", uri, msg)
		}
	}
	_, _, msg = f.mcpPost(t, tokenB, sidB, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_skill","arguments":{"skill":"alpha"}}}`)
	if res, _ := msg["result"].(map[string]any); res == nil || res["isError"] != true {
		t.Errorf("team-b read_skill alpha: %v", msg)
	}
}

// TestMCPRecordAttributed checks that a run asked for over /mcp is
// recorded with the tenant and token id that asked, as a REST run is.
func TestMCPRecordAttributed(t *testing.T) {
	f := newFixture(t, nil)
	_, sid, _ := f.mcpPost(t, tokenA, "", mcpInit)
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_skill_script","arguments":{"skill":"alpha","script":"missing.sh"}}}`
	if status, _, msg := f.mcpPost(t, tokenA, sid, call); status != http.StatusOK || msg["result"] == nil {
		t.Fatalf("tools/call: %d %v", status, msg)
	}
	var found bool
	for _, r := range f.records(t) {
		if r.MCP == nil || r.MCP.Tool != "run_skill_script" {
			continue
		}
		found = true
		if r.Serve == nil || r.Serve.Tenant != "team-a" || r.Serve.TokenID != "a-1" || r.Serve.ExecutionID != "" {
			t.Errorf("record's serve object: %+v, want tenant team-a, token a-1, no execution", r.Serve)
		}
	}
	if !found {
		t.Fatal("no record of the tools/call")
	}
}
