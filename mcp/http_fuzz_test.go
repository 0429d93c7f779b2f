package mcp

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzHTTPPost feeds arbitrary bodies and mirrored headers to the HTTP
// handler: it must never panic, and must answer every POST with one of
// the statuses the transport defines.
func FuzzHTTPPost(f *testing.F) {
	for _, seed := range []struct{ body, version, method, name, session string }{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`, "", "", "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_skills","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28", "tools/call", "list_skills", ""},
		{`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"skill://probe/SKILL.md","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "2026-07-28", "resources/read", "=?base64?c2tpbGw6Ly9wcm9iZS9TS0lMTC5tZA==?=", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "2025-03-26", "", "", "00"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "", "", "x"},
		{`{"id":{"a":1},"method":7}`, "", "", "", ""},
		{``, "", "", "", ""},
		{`{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":"skill://probe/%2e%2e/x"}}`, "", "", "", ""},
	} {
		f.Add(seed.body, seed.version, seed.method, seed.name, seed.session)
	}
	srv, err := NewServer(Config{SkillDirs: []string{skillsDir(f)}, MaxMessageBytes: 4096})
	if err != nil {
		f.Fatal(err)
	}
	h, err := srv.HTTPHandler(HTTPOptions{MaxSessions: 4})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { h.Close() })
	allowed := map[int]bool{200: true, 202: true, 400: true, 404: true, 413: true, 503: true}
	f.Fuzz(func(t *testing.T, body, version, method, name, session string) {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range map[string]string{headerProtocolVersion: version, headerMethod: method, headerName: name, headerSessionID: session} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if !allowed[w.Code] {
			t.Fatalf("status %d for %q (headers %q %q %q %q)", w.Code, body, version, method, name, session)
		}
	})
}
