package netproxy

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseRules(t *testing.T) {
	tests := []struct {
		in, err string
	}{
		{"api.github.com GET,HEAD /repos/", ""},
		{"api.example.com POST /v1/messages /v1/complete", ""},
		{"api.example.com:8443 * /v1/", ""},
		{"api.example.com   GET", ""},
		{"api.example.com *", "restricts nothing"},
		{"api.example.com get", "upper-case letters"},
		{"api.example.com GET,,HEAD", "upper-case letters"},
		{"api.example.com GET v1/", "does not start with /"},
		{"api.example.com GET /v1/../admin", "dot segment"},
		{"api.example.com GET /v1/..;/admin", "dot segment"},
		{"api.example.com GET /v1/%2e", "percent-encoded"},
		{"api.example.com GET /v1/a%20b", "percent sign"},
		{"api.example.com GET //x", "empty segment"},
		{"exa mple.com", "upper-case letters"},
	}
	for _, tt := range tests {
		_, err := ParsePattern(tt.in)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("ParsePattern(%q): %v, want %q", tt.in, err, tt.err)
		}
	}
	if _, err := NewPolicy(nil, []string{"api.example.com GET"}); err == nil || !strings.Contains(err.Error(), "belong in allow entries") {
		t.Errorf("deny with rules: %v", err)
	}
	for _, tt := range []struct {
		p, q string
		want bool
	}{
		{"api.example.com", "api.example.com GET /x", true},
		{"api.example.com GET,HEAD /repos/", "api.example.com GET /repos/a/", true},
		{"api.example.com GET,HEAD /repos/", "api.example.com POST /repos/a/", false},
		{"api.example.com GET,HEAD /repos/", "api.example.com GET", false},
		{"api.example.com GET", "api.example.com", false},
		{"*.example.com * /v1/", "api.example.com GET /v1/x", true},
	} {
		p, err1 := ParsePattern(tt.p)
		q, err2 := ParsePattern(tt.q)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := p.Covers(q); got != tt.want {
			t.Errorf("%q covers %q: %v, want %v", tt.p, tt.q, got, tt.want)
		}
	}
}

// TestRequestRulesPlain: on plain HTTP a request outside its host's rules
// is refused with the rule and the entry that would allow it; a path
// that could mean another to the server is refused; an HTTPS tunnel to a
// host with rules, which the proxy would not read, is refused.
func TestRequestRulesPlain(t *testing.T) {
	f := newFixture(t, []string{"api.example.com GET,HEAD /v1/", "api.example.com POST /v1/messages"}, nil)
	tests := []struct {
		method, url string
		status      int
		body        string
	}{
		{"GET", "http://api.example.com/v1/items?x=1", 200, "hello from api.example.com /v1/items"},
		{"HEAD", "http://api.example.com/v1/", 200, ""},
		{"POST", "http://api.example.com/v1/messages", 200, "hello"},
		{"POST", "http://api.example.com/v1/items", 403, "POST /v1/items to api.example.com:80 is outside the request rules"},
		{"DELETE", "http://api.example.com/v1/items", 403, "to allow it: --allow-host 'api.example.com DELETE /v1/items'"},
		{"GET", "http://api.example.com/v2/", 403, "path /v2/ is under none of /v1/"},
		{"GET", "http://api.example.com/v1/../admin", 403, "dot segment"},
		{"GET", "http://api.example.com/v1/%2e%2e/admin", 403, "percent-encoded"},
		// Tomcat, Jetty and Spring drop a segment's ;parameters before
		// resolving dot segments: Tomcat 10.1 serves /admin for both.
		{"GET", "http://api.example.com/v1/..;/admin", 403, "to allow it: the path as the server reads it (no dot or empty segment, backslash or encoded separator), or an entry without path prefixes (--allow-host 'api.example.com GET')"},
		{"GET", "http://api.example.com/v1/.;x=1/..;x=2/admin", 403, "dot segment"},
		{"GET", "http://api.example.com/v1/a;b=c", 200, "hello"},
		{"GET", "http://api.example.com/v1/a%20b", 200, "hello"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, tt.url, nil)
		req.URL.Opaque = strings.TrimPrefix(tt.url, "http:") // keep dot segments as written
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.url, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.body) {
			t.Errorf("%s %s: %d %q, want %d %q", tt.method, tt.url, resp.StatusCode, b, tt.status, tt.body)
		}
	}
	f.client.CloseIdleConnections()
	post := findConnection(t, f.proxy, func(c Connection) bool { return c.Method == "POST" && c.Allowed })
	if post.Rule != "allow api.example.com POST /v1/messages" {
		t.Errorf("POST /v1/messages logged as %+v: want the entry that permitted it", post)
	}
	if got := rawConnect(t, f.addr, "api.example.com:443"); !strings.Contains(got, "403") || !strings.Contains(got, "this tunnel would be opaque") {
		t.Errorf("tunnel to a host with rules: %q", got)
	}
}

// TestRequestRulesIntercepted: in a terminated tunnel (a secret's host)
// the rules apply to the request read inside; a refused one reaches no
// server and gets nothing injected.
func TestRequestRulesIntercepted(t *testing.T) {
	f := newSecretFixtureAllow(t, []string{"api.example.com GET /v1/", "other.example.com"}, "TOKEN@api.example.com")
	tok := f.secrets.Env()["TOKEN"]
	status, _ := f.do(t, "GET", "https://api.example.com/v1/items", map[string]string{"Authorization": "Bearer " + tok})
	if s := f.next(t); status != 200 || s.auth != "Bearer "+testSecretValue {
		t.Errorf("allowed request: %d, server saw %+v", status, s)
	}
	f.client.CloseIdleConnections()
	if e := findConnection(t, f.proxy, func(c Connection) bool { return c.Allowed }); e.Rule != "allow api.example.com GET /v1/" || len(e.Secrets) != 1 {
		t.Errorf("allowed connection %+v", e)
	}
	status, body := f.do(t, "POST", "https://api.example.com/v1/items", map[string]string{"Authorization": "Bearer " + tok})
	if status != 403 || !strings.Contains(body, "method POST is not one of GET") {
		t.Errorf("POST: %d %q", status, body)
	}
	status, _ = f.do(t, "GET", "https://api.example.com/admin", map[string]string{"Authorization": "Bearer " + tok})
	if status != 403 {
		t.Errorf("GET /admin: %d", status)
	}
	f.none(t)
	e := findConnection(t, f.proxy, func(c Connection) bool { return strings.Contains(c.Reason, "POST") })
	if e.Allowed || len(e.Secrets) != 0 || !strings.Contains(e.Remedy, "--allow-host 'api.example.com POST /v1/items'") {
		t.Errorf("refused connection %+v", e)
	}
}

// findConnection waits for the proxy to log a connection that match
// accepts and returns it: a connection is logged when it ends, which for
// an allowed one may be after later ones.
func findConnection(t *testing.T, p *Proxy, match func(Connection) bool) Connection {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, c := range p.Report().Connections {
			if match(c) {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no such connection logged: %+v", p.Report().Connections)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
