package mcp

import (
	"net/http"
	"strings"
	"testing"
)

// TestHTTPCORS checks that a browser page of an allowed origin passes
// the preflight and may read the answer and the session id, while a
// foreign origin gets neither, and a request without an Origin no CORS
// header.
func TestHTTPCORS(t *testing.T) {
	_, url := newHTTPServer(t, Config{}, HTTPOptions{AllowedOrigins: []string{"http://localhost:6274"}})
	do := func(method, origin string, hdr map[string]string) *http.Response {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	pre := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,mcp-protocol-version"}
	resp := do("OPTIONS", "http://localhost:6274", pre)
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:6274" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Mcp-Protocol-Version") ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight of the allowed origin: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := do("OPTIONS", "http://evil.example", pre); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight of a foreign origin: %d %v", resp.StatusCode, resp.Header)
	}
	json := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	resp = do("POST", "http://localhost:6274", json)
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:6274" ||
		resp.Header.Get("Access-Control-Expose-Headers") != "Mcp-Session-Id" || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Errorf("initialize from the allowed origin: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := do("POST", "", json); resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("initialize without an Origin: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := do("OPTIONS", "", nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("OPTIONS without an Origin: %d, want 405", resp.StatusCode)
	}
}
