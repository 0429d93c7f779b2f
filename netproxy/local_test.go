package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// loopbackServer is a TCP server on the host's loopback that answers
// every connection with its name and keeps what each sent.
type loopbackServer struct {
	port int
	mu   sync.Mutex
	got  []string
}

func (r *loopbackServer) received() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.got, "|")
}

// startLoopbackServer serves plain HTTP answers "server NAME" on a
// loopback port, keeping each connection's first bytes.
func startLoopbackServer(t *testing.T, name string) *loopbackServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	r := &loopbackServer{port: ln.Addr().(*net.TCPAddr).Port}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 4096)
				n, _ := c.Read(buf)
				r.mu.Lock()
				r.got = append(r.got, string(buf[:n]))
				r.mu.Unlock()
				body := "server " + name
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			}()
		}
	}()
	return r
}

// TestLocalPortsThroughProxy: a local port is reached as localhost:PORT
// and 127.0.0.1:PORT (plain HTTP, CONNECT, SOCKS5); another port of the
// host's loopback, another loopback address and ::1 stay refused, with
// the remedy naming --allow-local.
func TestLocalPortsThroughProxy(t *testing.T) {
	granted := startLoopbackServer(t, "granted")
	other := startLoopbackServer(t, "other")
	denied := &lockedBuffer{}
	p, addr := startProxy(t, Config{LocalPorts: []int{granted.port}, Denied: denied}, nil, nil)
	pu, _ := url.Parse("http://" + addr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: 10 * time.Second}
	get := func(u string) (int, string) {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	g, o := strconv.Itoa(granted.port), strconv.Itoa(other.port)
	for _, u := range []string{"http://localhost:" + g + "/", "http://127.0.0.1:" + g + "/", "http://LOCALHOST.:" + g + "/"} {
		if code, body := get(u); code != 200 || body != "server granted" {
			t.Errorf("%s: %d %q, want the granted server", u, code, body)
		}
	}
	for _, u := range []string{"http://localhost:" + o + "/", "http://127.0.0.1:" + o + "/", "http://127.0.0.2:" + g + "/", "http://[::1]:" + g + "/"} {
		if code, body := get(u); code != 403 {
			t.Errorf("%s: %d %q, want 403", u, code, body)
		}
	}
	if other.received() != "" {
		t.Errorf("the server on another loopback port got %q", other.received())
	}
	if !strings.Contains(denied.String(), "--allow-local "+o) {
		t.Errorf("denials do not name the remedy --allow-local %s:\n%s", o, denied.String())
	}
	for _, c := range []struct {
		host string
		port int
		want int
	}{
		{"localhost", granted.port, socksOK},
		{"127.0.0.1", granted.port, socksOK},
		{"localhost", other.port, socksNotAllowed},
		{"127.0.0.1", other.port, socksNotAllowed},
	} {
		if _, rep := socksDial(t, addr, socksConnect(1, c.host, c.port)); rep != c.want {
			t.Errorf("SOCKS %s:%d: reply %d, want %d", c.host, c.port, rep, c.want)
		}
	}
	p.Close()
	rep := p.Report()
	if rep.Connections[0].Rule != "allow-local "+g || rep.Connections[0].Addr != "127.0.0.1:"+g {
		t.Errorf("first connection logged as %+v", rep.Connections[0])
	}
}

// TestServeLocalFixedTarget: a local port's listener relays every
// connection to the host's 127.0.0.1:PORT byte for byte: a client that
// sends a proxy request (CONNECT, an absolute URI, a SOCKS greeting) for
// another port gets the granted server, which gets the bytes verbatim.
func TestServeLocalFixedTarget(t *testing.T) {
	granted := startLoopbackServer(t, "granted")
	other := startLoopbackServer(t, "other")
	p, _ := startProxy(t, Config{LocalPorts: []int{granted.port}}, nil, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.ServeLocal(ln, granted.port)
	o := strconv.Itoa(other.port)
	attempts := []string{
		"CONNECT 127.0.0.1:" + o + " HTTP/1.1\r\nHost: 127.0.0.1:" + o + "\r\n\r\n",
		"GET http://127.0.0.1:" + o + "/ HTTP/1.1\r\nHost: 127.0.0.1:" + o + "\r\n\r\n",
		string(append([]byte{5, 1, 0}, socksConnect(1, "127.0.0.1", other.port)...)),
	}
	for _, a := range attempts {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, a)
		b, _ := io.ReadAll(bufio.NewReader(c))
		c.Close()
		if !strings.HasSuffix(string(b), "server granted") {
			t.Errorf("sent %q, got %q, want the granted server's answer", a, b)
		}
	}
	if other.received() != "" {
		t.Errorf("the server on another loopback port got %q", other.received())
	}
	if got := granted.received(); !strings.Contains(got, "CONNECT 127.0.0.1:"+o) {
		t.Errorf("the granted server did not get the bytes verbatim: %q", got)
	}
	p.Close()
	rep := p.Report()
	if rep.Total != len(attempts) || rep.Allowed != len(attempts) || rep.Connections[0].Method != "LOCAL" || rep.BytesUp == 0 {
		t.Errorf("report %+v", rep)
	}
}

func TestLocalPortsRefused(t *testing.T) {
	pol, _ := NewPolicy(nil, nil)
	for _, ports := range [][]int{{0}, {65536}, {-1}} {
		if _, err := New(Config{Policy: pol, LocalPorts: ports}); err == nil {
			t.Errorf("New accepted local ports %v", ports)
		}
	}
	p, err := New(Config{Policy: pol, LocalPorts: []int{5432}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.ServeLocal(ln, 5433); err == nil {
		t.Error("ServeLocal served a port that is not a local port")
	}
	if err := CheckLocalPort(3128, 3128); err == nil {
		t.Error("CheckLocalPort accepted a reserved port")
	}
}

// TestLocalOwnPort: the proxy's own port in the run cannot be a local
// port, and a refusal of it suggests no --allow-local, which would be
// refused in turn.
func TestLocalOwnPort(t *testing.T) {
	pol, _ := NewPolicy(nil, nil)
	if _, err := New(Config{Policy: pol, LocalPorts: []int{3128}, OwnPort: 3128}); err == nil {
		t.Error("New accepted the proxy's own port as a local port")
	}
	p, err := New(Config{Policy: pol, OwnPort: 3128})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host   string
		port   int
		remedy bool
	}{
		{"localhost", 3128, false},
		{"localhost", 8080, true},
	} {
		_, d := p.decide(target{host: tc.host, port: tc.port})
		if d.Allowed || strings.Contains(d.Remedy, "--allow-local") != tc.remedy {
			t.Errorf("%s:%d: allowed %v, remedy %q; want a --allow-local remedy: %v", tc.host, tc.port, d.Allowed, d.Remedy, tc.remedy)
		}
	}
}
