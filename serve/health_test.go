package serve

import (
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestReadyz: ready when every tenant's runs can start; not ready (503)
// with the tenant and the cause when one cannot (its skills folder is
// gone), and while draining. Without a token the body holds the verdict
// and counts only: no tenant name, no path; a tenant's token sees its own
// tenant's lines, the metrics token all of them.
func TestReadyz(t *testing.T) {
	needSandbox(t)
	metricsTok := "the-metrics-token-0123456789"
	sum := sha(metricsTok)
	f := newFixture(t, func(c *Config) { c.MetricsToken = &sum })
	status, _, body := f.do(t, "GET", "/readyz", "", nil)
	if status != 200 || !strings.Contains(string(body), `"ready":true`) {
		t.Fatalf("readyz: %d %s", status, body)
	}
	gone := f.srv.tenants["team-b"].skillDirs[0]
	os.RemoveAll(gone)
	f.srv.ready.checked = f.srv.ready.checked.AddDate(-1, 0, 0) // stale
	tests := []struct {
		name, token string
		problems    int // lines shown
	}{
		{"no token", "", 0},
		{"unknown token", "not-a-token-at-all-xyz", 0},
		{"the other tenant", tokenA, 0},
		{"the tenant", tokenB, 1},
		{"the metrics token", metricsTok, 1},
	}
	for _, tt := range tests {
		status, _, body = f.do(t, "GET", "/readyz", tt.token, nil)
		var rep ReadyReport
		if err := json.Unmarshal(body, &rep); err != nil {
			t.Fatal(err)
		}
		if status != 503 || rep.Ready || rep.ProblemCount != 1 || len(rep.Problems) != tt.problems {
			t.Errorf("%s: readyz with a folder gone: %d %s", tt.name, status, body)
		}
		if tt.problems > 0 && !strings.Contains(rep.Problems[0], "tenant team-b") {
			t.Errorf("%s: problems %q", tt.name, rep.Problems)
		}
		// Team-a's own degraded lines (a host without some layer) are its
		// to see; nobody else's are.
		hidden := []string{"team-b", gone}
		if tt.token != tokenA {
			hidden = append(hidden, "team-a")
		}
		for _, h := range hidden {
			if tt.problems == 0 && strings.Contains(string(body), h) {
				t.Errorf("%s: the body names %s: %s", tt.name, h, body)
			}
		}
	}
	if !strings.Contains(f.logs.String(), `"msg":"not ready"`) {
		t.Error("the log does not say why the server is not ready")
	}
	f.srv.Close()
	if status, _, body := f.do(t, "GET", "/readyz", "", nil); status != 503 || !strings.Contains(string(body), `"draining":true`) {
		t.Errorf("readyz while draining: %d %s", status, body)
	}
}

// TestMetricsToken: with a metrics token, /metrics answers only its
// holder (401 otherwise, a tenant's token included); without one, anyone.
func TestMetricsToken(t *testing.T) {
	metricsTok := "the-metrics-token-0123456789"
	sum := sha(metricsTok)
	f := newFixture(t, func(c *Config) { c.MetricsToken = &sum })
	for _, tok := range []string{"", "wrong-token-0123456789", tokenA, metricsTok + "x"} {
		status, h, body := f.do(t, "GET", "/metrics", tok, nil)
		if status != http.StatusUnauthorized {
			t.Errorf("/metrics with token %q: %d, want 401", tok, status)
			continue
		}
		checkProblem(t, h, body, http.StatusUnauthorized, ProblemUnauthorized)
	}
	status, _, body := f.do(t, "GET", "/metrics", metricsTok, nil)
	if status != 200 || !strings.Contains(string(body), "skill_sandbox_auth_failures_total 4") {
		t.Errorf("/metrics with the metrics token: %d %s", status, body)
	}
	open := newFixture(t, nil)
	if status, _, _ := open.do(t, "GET", "/metrics", "", nil); status != 200 {
		t.Errorf("/metrics without a metrics token configured: %d", status)
	}
	same := sha(tokenA)
	if _, err := New(Config{Tokens: f.srv.cfg.Tokens, WorkDir: t.TempDir(), MetricsToken: &same}); err == nil {
		t.Error("a metrics token that is a tenant's token was taken")
	}
}

// TestParseMetricsToken: the file holds one hash, lowercase, one line.
func TestParseMetricsToken(t *testing.T) {
	h := HashToken("the-metrics-token-0123456789")
	tests := []struct {
		in string
		ok bool
	}{
		{h, true}, {h + "\n", true}, {h + "\r\n", true},
		{strings.ToUpper(h), false}, {h + "\n\n", false}, {h[:63], false}, {h + "0", false},
		{"", false}, {" " + h, false}, {"the-metrics-token-0123456789", false}, {strings.Repeat("g", 64), false},
	}
	for _, tt := range tests {
		sum, err := ParseMetricsToken([]byte(tt.in))
		if (err == nil) != tt.ok {
			t.Errorf("%q: error %v, want ok %v", tt.in, err, tt.ok)
		}
		if tt.ok && hex.EncodeToString(sum[:]) != h {
			t.Errorf("%q: %x", tt.in, sum)
		}
	}
}

// FuzzParseMetricsToken: no input panics, and an accepted one is the hex
// of the hash returned.
func FuzzParseMetricsToken(f *testing.F) {
	f.Add([]byte(HashToken("the-metrics-token-0123456789") + "\n"))
	f.Add([]byte(strings.Repeat("A", 64)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		sum, err := ParseMetricsToken(data)
		if err == nil && !strings.HasPrefix(string(data), hex.EncodeToString(sum[:])) {
			t.Errorf("%q parsed as %x", data, sum)
		}
	})
}

// TestHTTP2: the server speaks HTTP/2 over TLS (ALPN) and in cleartext
// with prior knowledge.
func TestHTTP2(t *testing.T) {
	f := newFixture(t, nil)
	hs := f.srv.HTTPServer()
	ts := httptest.NewUnstartedServer(hs.Handler)
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	resp, err := ts.Client().Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("TLS: %s", resp.Proto)
	}
	h2c := httptest.NewUnstartedServer(hs.Handler)
	h2c.Config.Protocols = hs.Protocols
	h2c.Start()
	defer h2c.Close()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	c := &http.Client{Transport: &http.Transport{Protocols: &p, TLSClientConfig: &tls.Config{}}}
	resp, err = c.Get(h2c.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("h2c: %s", resp.Proto)
	}
}
