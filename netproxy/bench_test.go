package netproxy

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkTunnelTLS measures one HTTPS request through a CONNECT tunnel
// of the proxy: CONNECT, the TLS handshake (whose first record the proxy
// reads and checks before relaying it), a GET and the close.
func BenchmarkTunnelTLS(b *testing.B) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	tn := &testNet{
		names:  map[string][]string{"api.example.com": {"203.0.113.10"}},
		routes: map[string]string{"203.0.113.10:443": srv.Listener.Addr().String()},
	}
	_, addr := startProxy(b, Config{Resolve: tn.resolve, Dial: tn.dial}, []string{"api.example.com"}, nil)
	cfg := &tls.Config{ServerName: "api.example.com", InsecureSkipVerify: true}
	b.ResetTimer()
	for range b.N {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		br := bufio.NewReader(c)
		fmt.Fprintf(c, "CONNECT api.example.com:443 HTTP/1.1\r\n\r\n")
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				b.Fatal(err)
			}
			if line == "\r\n" {
				break
			}
		}
		tc := tls.Client(c, cfg)
		fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n")
		resp, err := io.ReadAll(tc)
		if err != nil || !strings.HasSuffix(string(resp), "ok") {
			b.Fatalf("%q, %v", resp, err)
		}
		c.Close()
	}
}

// BenchmarkSecretRequest compares one HTTPS request with a new connection
// through a plain tunnel (other.example.com: the proxy relays the bytes)
// and through a terminated tunnel with a secret injected
// (api.example.com: two TLS handshakes, one with a freshly verified
// server chain, the request read and rewritten).
func BenchmarkSecretRequest(b *testing.B) {
	f := newSecretFixture(b)
	tok := f.secrets.Env()["TOKEN"]
	tr := f.client.Transport.(*http.Transport)
	tr.DisableKeepAlives = true
	go func() {
		for range f.got {
		}
	}()
	for _, host := range []string{"other.example.com", "api.example.com"} {
		name := "tunnel"
		if host == "api.example.com" {
			name = "intercepted"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				req, _ := http.NewRequest("GET", "https://"+host+"/bench", nil)
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := f.client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
