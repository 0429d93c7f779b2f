package netproxy

import (
	"encoding/base64"
	"io"
	"strings"
	"testing"
)

// innerExchange sends raw, one request, through a terminated tunnel to
// api.example.com and returns the whole answer, once the proxy has
// logged the connection.
func (f *secretFixture) innerExchange(t *testing.T, raw string) string {
	t.Helper()
	tc, err := f.innerConn(t, "api.example.com:443", "api.example.com")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(tc, raw)
	b, _ := io.ReadAll(tc)
	tc.Close()
	return string(b)
}

// TestSecretDroppedHeaderNotInjected: a header the Connection header
// names is not sent on, so its placeholder is not replaced and the record
// does not name its secret as injected (it did, for a value that never
// left the proxy).
func TestSecretDroppedHeaderNotInjected(t *testing.T) {
	f := newSecretFixture(t)
	key := f.secrets.Env()["KEY"]
	line := f.innerExchange(t, "GET /x HTTP/1.1\r\nHost: api.example.com\r\nConnection: X-Api-Key\r\nX-Api-Key: "+key+"\r\n\r\n")
	if !strings.HasPrefix(line, "HTTP/1.1 200 OK") {
		t.Fatalf("got %.80q", line)
	}
	if s := f.next(t); s.key != "" {
		t.Errorf("the server got X-Api-Key %q", s.key)
	}
	if e := lastConnection(t, f.proxy, 1); len(e.Secrets) != 0 {
		t.Errorf("the record says %v injected into a dropped header", e.Secrets)
	}
}

// TestSecretInjectedHeadBounded: a request head full of placeholders
// would make the proxy build a head of megabytes (a 16 KiB head holds
// 188 placeholders; with a 16 KiB value that was 3 MiB of header, 16 MiB
// allocated per request, a 253 MiB heap with 100 such requests at once).
// It is refused with 431 before anything reaches the server; a request
// with the value twice still passes.
func TestSecretInjectedHeadBounded(t *testing.T) {
	f := newSecretFixture(t)
	big := strings.Repeat("v", maxSecretValue)
	for i := range f.secrets.list {
		f.secrets.list[i].Value = big
	}
	tok, key := f.secrets.Env()["TOKEN"], f.secrets.Env()["KEY"]
	many := strings.Repeat(tok, (DefaultMaxHeaderBytes-100)/len(tok))
	for _, tt := range []struct{ name, req string }{
		{"header", "GET /x HTTP/1.1\r\nHost: api.example.com\r\nX-Api-Key: " + many + "\r\n\r\n"},
		{"basic", "GET /x HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Basic " + b64(strings.Repeat(tok, 100)) + "\r\n\r\n"},
		{"url", "GET /x?k=" + strings.Repeat(key, 100) + " HTTP/1.1\r\nHost: api.example.com\r\n\r\n"},
	} {
		// The test server refuses a head over 1 MiB with a 431 of its
		// own: the proxy's says so.
		if got := f.innerExchange(t, tt.req); !strings.HasPrefix(got, "HTTP/1.1 431 ") || !strings.Contains(got, "skill-sandbox: network:") {
			t.Errorf("%s: got %.80q, want the proxy's 431", tt.name, got)
		}
		f.none(t)
	}
	if d := f.denied.String(); !strings.Contains(d, "more placeholders than the proxy replaces") {
		t.Errorf("denial lines:\n%s", d)
	}
	line := f.innerExchange(t, "GET /x?k="+key+" HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer "+tok+"\r\nX-Api-Key: "+key+"\r\n\r\n")
	if !strings.HasPrefix(line, "HTTP/1.1 200 OK") {
		t.Fatalf("two values: got %.80q", line)
	}
	if s := f.next(t); s.auth != "Bearer "+big || s.key != big {
		t.Errorf("the server got %d and %d bytes", len(s.auth), len(s.key))
	}
}

// b64 is the Basic credentials "x:" + pass, encoded.
func b64(pass string) string { return base64.StdEncoding.EncodeToString([]byte("x:" + pass)) }
