package netproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// recordingServer accepts one connection at a time, reads everything its
// client sends until the client half-closes or goes away, sends that on
// got, and answers with a response whose body is what it read: it shows
// exactly what the proxy sent on.
func recordingServer(t *testing.T) (string, chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			b, _ := io.ReadAll(c)
			got <- string(b)
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(b), b)
			c.Close()
		}
	}()
	return ln.Addr().String(), got
}

// TestProxyCarriesOneRequest: a plain HTTP connection carries one request
// to the server, framed as the proxy read it: bytes after it (a second
// request with another Host, smuggled after a body) never reach the
// checked address, and the connection is closed when they come; framing
// two parsers could read differently is refused before anything is sent.
func TestProxyCarriesOneRequest(t *testing.T) {
	srv, received := recordingServer(t)
	tn := &testNet{
		names:  map[string][]string{"rec.example.com": {"203.0.113.20"}},
		routes: map[string]string{"203.0.113.20:80": srv},
	}
	_, addr := startProxy(t, Config{Resolve: tn.resolve, Dial: tn.dial}, []string{"rec.example.com"}, nil)
	const head = "GET /a HTTP/1.1\r\nHost: rec.example.com\r\nConnection: close\r\n\r\n"
	const second = "GET /b HTTP/1.1\r\nHost: internal.example.net\r\n\r\n"
	const lengthHead = "POST /a HTTP/1.1\r\nHost: rec.example.com\r\nContent-Length: 5\r\nConnection: close\r\n\r\n"
	const chunked = "5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n"
	const chunkedHead = "POST /a HTTP/1.1\r\nHost: rec.example.com\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n"
	tests := []struct {
		name, req string
		status    string // "": the connection is closed without a response
		upstream  string // what the server must have received; "": no connection
	}{
		{"one", "GET http://rec.example.com/a HTTP/1.1\r\n\r\n", "200", head},
		{"pipelined", "GET http://rec.example.com/a HTTP/1.1\r\n\r\n" + second, "", head},
		{"length", "POST http://rec.example.com/a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", "200", lengthHead + "hello"},
		{"after length", "POST http://rec.example.com/a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello" + second, "", lengthHead + "hello"},
		{"length list", "POST http://rec.example.com/a HTTP/1.1\r\nContent-Length: 2, 2\r\n\r\nhi", "200",
			"POST /a HTTP/1.1\r\nHost: rec.example.com\r\nContent-Length: 2, 2\r\nConnection: close\r\n\r\nhi"},
		{"chunked", "POST http://rec.example.com/a HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n" + chunked, "200", chunkedHead + chunked},
		{"after chunked", "POST http://rec.example.com/a HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n" + chunked + second, "", chunkedHead + chunked},
		// A chunk longer than its size line says: the head went out, the
		// rest is cut off at the framing error.
		{"bad chunk", "POST http://rec.example.com/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nhello\r\n0\r\n\r\n" + second, "",
			"POST /a HTTP/1.1\r\nHost: rec.example.com\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n1\r\nh"},
		{"te and cl", "POST http://rec.example.com/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n" + second, "400", ""},
		{"te not chunked", "POST http://rec.example.com/a HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "400", ""},
		{"te twice", "POST http://rec.example.com/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400", ""},
		{"te in 1.0", "POST http://rec.example.com/a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400", ""},
		{"cl differs", "POST http://rec.example.com/a HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 40\r\n\r\nabcd", "400", ""},
		{"cl signed", "POST http://rec.example.com/a HTTP/1.1\r\nContent-Length: +4\r\n\r\nabcd", "400", ""},
		{"cl hex", "POST http://rec.example.com/a HTTP/1.1\r\nContent-Length: 0x4\r\n\r\nabcd", "400", ""},
		{"cl empty element", "POST http://rec.example.com/a HTTP/1.1\r\nContent-Length: 4,\r\n\r\nabcd", "400", ""},
		{"connection drops cl", "POST http://rec.example.com/a HTTP/1.1\r\nContent-Length: 4\r\nConnection: content-length\r\n\r\nabcd" + second, "400", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tn.mu.Lock()
			dialed := len(tn.dialed)
			tn.mu.Unlock()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(c, tt.req); err != nil {
				t.Fatal(err)
			}
			c.(*net.TCPConn).CloseWrite()
			got, _ := io.ReadAll(c)
			switch tt.status {
			case "":
				if len(got) != 0 {
					t.Errorf("got a response %q, want the connection closed", got)
				}
			default:
				resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(got)), nil)
				if err != nil {
					t.Fatalf("response %q: %v", got, err)
				}
				body, _ := io.ReadAll(resp.Body)
				if fmt.Sprint(resp.StatusCode) != tt.status {
					t.Fatalf("status %d %q, want %s", resp.StatusCode, body, tt.status)
				}
			}
			if tt.upstream == "" {
				tn.mu.Lock()
				defer tn.mu.Unlock()
				if len(tn.dialed) != dialed {
					t.Errorf("the proxy connected to %v for a refused request", tn.dialed[dialed:])
				}
				return
			}
			// The server reads until the proxy lets go of the connection.
			select {
			case up := <-received:
				if up != tt.upstream {
					t.Errorf("the server received\n%q\nwant\n%q", up, tt.upstream)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the server got no connection")
			}
		})
	}
}

// TestProxyRequestBodies: Go's client sends bodies through the proxy with
// a length and chunked, and the server reads them whole.
func TestProxyRequestBodies(t *testing.T) {
	f := newFixture(t, []string{"api.example.com"}, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %d %v %v", r.Method, len(b), r.TransferEncoding, err)
	}))
	defer srv.Close()
	f.net.routes["203.0.113.10:80"] = srv.Listener.Addr().String()
	big := strings.Repeat("x", 100<<10)
	for _, tt := range []struct {
		body io.Reader
		want string
	}{
		{strings.NewReader(big), "POST 102400 [] <nil>"},
		{io.MultiReader(strings.NewReader(big), strings.NewReader("y")), "POST 102401 [chunked] <nil>"},
	} {
		resp, err := f.client.Post("http://api.example.com/up", "text/plain", tt.body)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != tt.want {
			t.Errorf("got %q, want %q", b, tt.want)
		}
	}
}

// TestProxyServerIgnoresClose: a server that keeps the connection open
// despite "Connection: close" gets Go's client to reuse its connection to
// the proxy for a second request; the proxy closes it instead of carrying
// the request, and the client retries on a new connection, so both
// requests get their answer (and each connection carried one request).
func TestProxyServerIgnoresClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					// No "Connection: close" in the answer, and the
					// connection stays open for more.
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(req.URL.Path), req.URL.Path)
				}
			}()
		}
	}()
	f := newFixture(t, []string{"api.example.com"}, nil)
	f.net.routes["203.0.113.10:80"] = ln.Addr().String()
	for _, path := range []string{"/first", "/second", "/third"} {
		resp, err := f.client.Get("http://api.example.com" + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != path {
			t.Errorf("GET %s: %q", path, b)
		}
	}
	f.proxy.Close()
	if r := f.proxy.Report(); r.Allowed < 3 {
		t.Errorf("report %+v: want one connection per request", r)
	}
}
