package serve

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestLogFloodWithoutToken: clients without a valid token cannot make
// the server write a log line per request (unknown tokens) or per
// connection (TLS handshake errors); the lines dropped are summed up.
func TestLogFloodWithoutToken(t *testing.T) {
	f := newFixture(t, nil)
	const n = 300
	start := time.Now()
	for range n {
		req, err := http.NewRequest("GET", f.ts.URL+"/v1/skills", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer not-a-token")
		resp, err := f.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	hs := f.srv.HTTPServer()
	ts := httptest.NewUnstartedServer(hs.Handler)
	ts.Config.ErrorLog = hs.ErrorLog
	ts.TLS = hs.TLSConfig.Clone()
	ts.StartTLS()
	defer ts.Close()
	for range n {
		conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "https://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(conn, "GET / HTTP/1.0\r\n\r\n")
		conn.Read(make([]byte, 512))
		conn.Close()
	}
	// Each second lets logsPerSecond lines through.
	allowed := logsPerSecond * (int(time.Since(start)/time.Second) + 2)
	logs := f.logs.String()
	lines := strings.Count(logs, "unknown token") + strings.Count(logs, "TLS handshake error")
	if lines > allowed {
		t.Errorf("%d requests and %d connections without a token wrote %d log lines, want at most %d", n, n, lines, allowed)
	}
	if lines == 0 {
		t.Errorf("no line logged at all:\n%s", logs)
	}
}

func TestLogLimit(t *testing.T) {
	var l logLimit
	t0 := time.Unix(1000, 0)
	for i := range logsPerSecond + 5 {
		ok, dropped := l.allow(t0.Add(time.Duration(i) * time.Millisecond))
		if ok != (i < logsPerSecond) || dropped != 0 {
			t.Fatalf("line %d: ok %v dropped %d", i, ok, dropped)
		}
	}
	if ok, dropped := l.allow(t0.Add(1500 * time.Millisecond)); !ok || dropped != 5 {
		t.Errorf("next second: ok %v dropped %d, want true 5", ok, dropped)
	}
}
