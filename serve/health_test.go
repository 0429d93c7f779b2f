package serve

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestReadyz: ready when every tenant's runs can start; not ready (503)
// with the tenant and the cause when one cannot (its skills folder is
// gone), and while draining.
func TestReadyz(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, nil)
	status, _, body := f.do(t, "GET", "/readyz", "", nil)
	if status != 200 || !strings.Contains(string(body), `"ready":true`) {
		t.Fatalf("readyz: %d %s", status, body)
	}
	os.RemoveAll(f.srv.tenants["team-b"].skillDirs[0])
	f.srv.ready.checked = f.srv.ready.checked.AddDate(-1, 0, 0) // stale
	status, _, body = f.do(t, "GET", "/readyz", "", nil)
	var rep ReadyReport
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	if status != 503 || rep.Ready || len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], "tenant team-b") {
		t.Errorf("readyz with a folder gone: %d %s", status, body)
	}
	if !strings.Contains(f.logs.String(), `"msg":"not ready"`) {
		t.Error("the log does not say why the server is not ready")
	}
	f.srv.Close()
	if status, _, body := f.do(t, "GET", "/readyz", "", nil); status != 503 || !strings.Contains(string(body), `"draining":true`) {
		t.Errorf("readyz while draining: %d %s", status, body)
	}
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
