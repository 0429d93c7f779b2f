package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustAddr(t testing.TB, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// testNet is a fake internet for the proxy: names resolve to the addresses
// in names (checked like real answers), and dialling a public test
// address (TEST-NET-3) reaches the local server in routes.
type testNet struct {
	names  map[string][]string
	routes map[string]string // "203.0.113.10:443" → "127.0.0.1:PORT"
	mu     sync.Mutex
	dialed []string
}

func (n *testNet) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, s := range n.names[host] {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return out, nil
}

func (n *testNet) dial(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	n.mu.Lock()
	n.dialed = append(n.dialed, ap.String())
	n.mu.Unlock()
	to, ok := n.routes[ap.String()]
	if !ok {
		return nil, fmt.Errorf("test network: no route to %s", ap)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", to)
}

// startProxy serves a proxy for the lists on a loopback port.
func startProxy(t testing.TB, cfg Config, allow, deny []string) (*Proxy, string) {
	t.Helper()
	pol, err := NewPolicy(allow, deny)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Policy = pol
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	return p, ln.Addr().String()
}

// fixture is a proxy in front of a plain and a TLS test server reachable
// as api.example.com and other names.
type fixture struct {
	proxy  *Proxy
	addr   string
	client *http.Client
	denied *lockedBuffer
	net    *testNet
}

// lockedBuffer collects the proxy's denial lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newFixture(t *testing.T, allow, deny []string, opts ...func(*Config)) *fixture {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s %s", r.Host, r.URL.Path)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	plain := httptest.NewServer(mux)
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(mux)
	t.Cleanup(secure.Close)
	tn := &testNet{
		names: map[string][]string{
			"api.example.com":    {"203.0.113.10"},
			"example.com":        {"203.0.113.10"},
			"badexample.com":     {"203.0.113.10"},
			"www.example.com":    {"203.0.113.10"},
			"loop.example.com":   {"127.0.0.1"},
			"meta.example.com":   {"169.254.169.254"},
			"mixed.example.com":  {"10.0.0.1", "203.0.113.10"},
			"v6.example.com":     {"::ffff:127.0.0.1", "fe80::1"},
			"lan.example.com":    {"192.168.1.20"},
			"compat.example.com": {"::7f00:1"},
			"6to4.example.com":   {"2002:a9fe:a9fe::1"},
			"teredo.example.com": {"2001:0:4136:e378:8000:63bf:80ff:fffe"},
		},
		routes: map[string]string{
			"203.0.113.10:80":  plain.Listener.Addr().String(),
			"203.0.113.10:443": secure.Listener.Addr().String(),
			"127.0.0.1:80":     plain.Listener.Addr().String(),
		},
	}
	denied := &lockedBuffer{}
	cfg := Config{Resolve: tn.resolve, Dial: tn.dial, Denied: denied}
	for _, o := range opts {
		o(&cfg)
	}
	p, addr := startProxy(t, cfg, allow, deny)
	pu, _ := url.Parse("http://" + addr)
	client := &http.Client{
		Transport: &http.Transport{
			Proxy:           http.ProxyURL(pu),
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
		},
		Timeout: 10 * time.Second,
	}
	t.Cleanup(client.CloseIdleConnections)
	return &fixture{proxy: p, addr: addr, client: client, denied: denied, net: tn}
}

func TestProxyDecisions(t *testing.T) {
	f := newFixture(t,
		[]string{"api.example.com", "*.example.com", "127.0.0.1:80"},
		[]string{"www.example.com"})
	tests := []struct {
		url    string
		status int
		body   string // substring of the body
	}{
		{"http://api.example.com/x", 200, "hello from api.example.com /x"},
		{"https://api.example.com/y", 200, "hello from api.example.com /y"},
		{"https://API.EXAMPLE.COM./z", 200, "hello from"},
		{"http://example.com/", 403, "not in the allow list"},              // *.example.com does not cover example.com
		{"https://badexample.com/", 403, "not in the allow list"},          // nor badexample.com
		{"https://www.example.com/", 403, "denied by \"www.example.com\""}, // deny wins
		{"https://api.example.com:8443/", 403, "not in the allow list"},    // other port
		{"https://203.0.113.10/", 403, "IP address"},                       // IP literal without a grant
		{"http://loop.example.com/", 403, "127.0.0.1 (loopback)"},
		{"https://meta.example.com/", 403, "169.254.169.254 (link-local (cloud metadata))"},
		{"https://lan.example.com/", 403, "192.168.1.20 (private)"},
		{"https://v6.example.com/", 403, "refused addresses"},
		{"https://mixed.example.com/", 200, "hello"}, // the private answer is skipped
		{"http://compat.example.com/", 403, "::7f00:1 (IPv4-compatible (deprecated))"},
		{"http://6to4.example.com/", 403, "2002:a9fe:a9fe::1 (6to4 of 169.254.169.254, link-local (cloud metadata))"},
		{"http://teredo.example.com/", 403, "(Teredo of 127.0.0.1, loopback)"},
		{"http://127.0.0.1:80/", 200, "hello from 127.0.0.1 /"}, // explicit IP grant
		{"http://api.example.com/redirect?to=http://example.com/", 403, "not in the allow list"},
		{"https://api.example.com/redirect?to=https://meta.example.com/", 403, "169.254.169.254"},
	}
	for _, tt := range tests {
		resp, err := f.client.Get(tt.url)
		var status int
		var body string
		if err != nil {
			// Go's client hides the response to a refused CONNECT: send
			// that CONNECT by hand to see it.
			var ue *url.Error
			if !errors.As(err, &ue) {
				t.Fatalf("GET %s: %v", tt.url, err)
			}
			u, _ := url.Parse(ue.URL)
			port := u.Port()
			if port == "" {
				port = "443"
			}
			resp := rawConnect(t, f.addr, net.JoinHostPort(u.Hostname(), port))
			fmt.Sscanf(resp, "HTTP/1.1 %d", &status)
			body = resp
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			status, body = resp.StatusCode, string(b)
		}
		if status != tt.status || !strings.Contains(body, tt.body) {
			t.Errorf("GET %s: %d %q, want %d containing %q", tt.url, status, body, tt.status, tt.body)
		}
	}
	for _, dialed := range f.net.dialed {
		if strings.HasPrefix(dialed, "10.") || strings.HasPrefix(dialed, "169.254") {
			t.Errorf("the proxy dialled a refused address %s", dialed)
		}
	}
	if !strings.Contains(f.denied.String(), "skill-sandbox: network: denied CONNECT meta.example.com:443") {
		t.Errorf("denied lines: %s", f.denied.String())
	}
	f.proxy.Close()
	r := f.proxy.Report()
	if r.Total != r.Allowed+r.Denied || r.Allowed == 0 || r.Denied == 0 || r.BytesDown == 0 {
		t.Errorf("report totals: %+v", r)
	}
	for _, c := range r.Connections {
		if c.Allowed && (c.Addr == "" || c.Rule == "" || c.BytesDown == 0) {
			t.Errorf("allowed connection without address, rule or bytes: %+v", c)
		}
		if !c.Allowed && c.Reason == "" {
			t.Errorf("denied connection without reason: %+v", c)
		}
	}
}

// rawConnect sends a CONNECT and returns the whole response.
func rawConnect(t *testing.T, proxy, hostport string) string {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostport, hostport)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(c)
	return string(b)
}

func TestProxyBadRequests(t *testing.T) {
	f := newFixture(t, []string{"api.example.com"}, nil)
	tests := []struct {
		req    string
		status string
	}{
		{"GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n", "400"},
		{"GET https://api.example.com/ HTTP/1.1\r\n\r\n", "400"},
		{"GET ftp://api.example.com/ HTTP/1.1\r\n\r\n", "400"},
		{"GET http://user@api.example.com/ HTTP/1.1\r\n\r\n", "400"},
		{"CONNECT api.example.com HTTP/1.1\r\n\r\n", "400"},
		{"CONNECT api.example.com:443 HTTP/2.0\r\n\r\n", "400"},
		{"CONNECT api.example.com:443 HTTP/1.1\nHost: x\n\n", "400"},
		{"CONNECT api.example.com:443 HTTP/1.1\r\nBad Header: x\r\n\r\n", "400"},
		{"CONNECT api.example.com:443 HTTP/1.1\r\nX: a\x00b\r\n\r\n", "400"},
		{"CONNECT api.example.com:443 HTTP/1.1\r\n folded\r\n\r\n", "400"},
		{"CONNECT 0x7f.1:443 HTTP/1.1\r\n\r\n", "400"},
		{"CONNECT [::1]:443 HTTP/1.1\r\n\r\n", "403"},
		{"CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n", "403"},
		{"GET http://[::ffff:127.0.0.1]/ HTTP/1.1\r\n\r\n", "403"},
	}
	for _, tt := range tests {
		c, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, tt.req)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.HasPrefix(line, "HTTP/1.1 "+tt.status+" ") {
			t.Errorf("%q: got %q, want %s", tt.req, line, tt.status)
		}
	}
}

func TestProxyForwardsOneHostPerConnection(t *testing.T) {
	f := newFixture(t, []string{"api.example.com"}, nil)
	c, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A keep-alive request: the upstream gets "Connection: close" and the
	// Proxy-* headers are stripped.
	io.WriteString(c, "GET http://api.example.com/a HTTP/1.1\r\nHost: evil.example.net\r\nProxy-Authorization: x\r\nConnection: keep-alive\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello from api.example.com /a" || !resp.Close {
		t.Errorf("got %q close=%v", b, resp.Close)
	}
}

func TestSlowloris(t *testing.T) {
	p, addr := startProxy(t, Config{HeaderTimeout: 300 * time.Millisecond}, []string{"api.example.com"}, nil)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(c)
		done <- string(b)
	}()
	// One byte every 50 ms: each read makes progress, but the whole head
	// has a deadline.
	for _, b := range []byte("CONNECT api.example.com:443 HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa") {
		if _, err := c.Write([]byte{b}); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
		if time.Since(start) > 10*time.Second {
			t.Fatal("slow client still connected after 10s")
		}
	}
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "HTTP/1.1 408 ") {
			t.Errorf("got %q, want 408", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("connection not closed")
	}
	p.Close()
	if r := p.Report(); r.Denied != 1 || !strings.Contains(r.Connections[0].Reason, "in time") {
		t.Errorf("report: %+v", r)
	}
}

func TestHugeHeader(t *testing.T) {
	_, addr := startProxy(t, Config{}, []string{"api.example.com"}, nil)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		io.WriteString(c, "CONNECT api.example.com:443 HTTP/1.1\r\nX-Big: ")
		chunk := strings.Repeat("a", 64<<10)
		for i := 0; i < 1024; i++ { // 64 MiB unless the proxy hangs up
			if _, err := io.WriteString(c, chunk); err != nil {
				return
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 431 ") {
		t.Errorf("got %q, want 431", line)
	}
}

// TestManyConnections opens 1,000 connections at once: MaxConns are
// served (and time out), the rest get 503 at once, and the proxy still
// serves a normal request afterwards.
func TestManyConnections(t *testing.T) {
	f := newFixture(t, []string{"api.example.com"}, nil, func(c *Config) { c.HeaderTimeout = 2 * time.Second })
	const n = 1000
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	var busy, timedOut int
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, c := range conns {
		wg.Add(1)
		go func(c net.Conn) {
			defer wg.Done()
			c.SetReadDeadline(time.Now().Add(15 * time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			mu.Lock()
			defer mu.Unlock()
			switch {
			case strings.HasPrefix(line, "HTTP/1.1 503 "):
				busy++
			case strings.HasPrefix(line, "HTTP/1.1 408 "):
				timedOut++
			}
		}(c)
	}
	wg.Wait()
	if busy+timedOut != n || timedOut > DefaultMaxConns || busy < n-DefaultMaxConns {
		t.Errorf("%d got 503, %d got 408, want %d in all and at most %d served", busy, timedOut, n, DefaultMaxConns)
	}
	resp, err := f.client.Get("https://api.example.com/after")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("after the flood: %s", resp.Status)
	}
}

// TestClientNeverReads: a server streams without end to a client that
// never reads; the proxy gives up after IdleTimeout instead of buffering.
func TestClientNeverReads(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sent := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 64<<10)
		var n int64
		for {
			c.SetWriteDeadline(time.Now().Add(20 * time.Second))
			k, err := c.Write(buf)
			n += int64(k)
			if err != nil {
				sent <- n
				return
			}
		}
	}()
	tn := &testNet{
		names:  map[string][]string{"stream.example.com": {"203.0.113.20"}},
		routes: map[string]string{"203.0.113.20:443": ln.Addr().String()},
	}
	p, addr := startProxy(t, Config{Resolve: tn.resolve, Dial: tn.dial, IdleTimeout: 500 * time.Millisecond}, []string{"stream.example.com"}, nil)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetReadBuffer(4 << 10)
	}
	io.WriteString(c, "CONNECT stream.example.com:443 HTTP/1.1\r\n\r\n")
	select {
	case n := <-sent:
		// Kernel socket buffers hold a few MiB at most; the proxy itself
		// holds one relay buffer.
		if n > 64<<20 {
			t.Errorf("the server could send %d bytes to a client that never reads", n)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the proxy kept the stalled tunnel open")
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.Report().Total == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r := p.Report(); r.Total != 1 || !r.Connections[0].Allowed {
		t.Errorf("report: %+v", r)
	}
}

func TestCloseEndsTunnels(t *testing.T) {
	f := newFixture(t, []string{"api.example.com"}, nil)
	c, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT api.example.com:443 HTTP/1.1\r\n\r\n")
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.1 200 ") {
		t.Fatalf("CONNECT: %q", line)
	}
	closed := make(chan struct{})
	go func() { f.proxy.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end an open tunnel")
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(br); err != nil && !errors.Is(err, io.EOF) {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Error("tunnel still open after Close")
		}
	}
	if r := f.proxy.Report(); r.Total != 1 || r.Allowed != 1 {
		t.Errorf("report after Close: %+v", r)
	}
}

func TestReportTruncated(t *testing.T) {
	var r Report
	for i := 0; i < 5; i++ {
		r.add(Connection{Allowed: i%2 == 0, BytesUp: 1, BytesDown: 2}, 3)
	}
	if len(r.Connections) != 3 || !r.Truncated || r.Total != 5 || r.Allowed != 3 || r.Denied != 2 || r.BytesUp != 5 || r.BytesDown != 10 {
		t.Errorf("report: %+v", r)
	}
}

// TestDeniedLinesBounded: a script that makes refused requests in a loop
// gets MaxLog lines on the caller's stderr and one more saying the rest
// are left out, while the report counts them all.
func TestDeniedLinesBounded(t *testing.T) {
	denied := &lockedBuffer{}
	p, addr := startProxy(t, Config{Denied: denied, MaxLog: 4}, []string{"api.example.com"}, nil)
	for i := 0; i < 10; i++ {
		if got := rawConnect(t, addr, fmt.Sprintf("denied%d.example.org:443", i)); !strings.HasPrefix(got, "HTTP/1.1 403 ") {
			t.Fatalf("request %d: %q", i, got)
		}
	}
	p.Close()
	lines := strings.Split(strings.TrimSuffix(denied.String(), "\n"), "\n")
	if len(lines) != 5 || !strings.Contains(lines[3], "denied3.example.org") ||
		lines[4] != "skill-sandbox: network: more than 4 requests denied; the rest are not shown here (the audit record counts them)" {
		t.Errorf("denied lines:\n%s", denied.String())
	}
	if r := p.Report(); r.Denied != 10 || len(r.Connections) != 4 || !r.Truncated {
		t.Errorf("report: %+v", r)
	}
}

// TestDeniedAddressKeepsNamesOut: a deny entry naming an address refuses
// the names that resolve to it, not only its IP literal, and is never
// dialled for them.
func TestDeniedAddressKeepsNamesOut(t *testing.T) {
	f := newFixture(t, []string{"*.example.com"}, []string{"203.0.113.10", "[2001:db8::7]:443"})
	f.net.names["both.example.com"] = []string{"203.0.113.10", "2001:db8::7"}
	for _, tt := range []struct{ hostport, want string }{
		{"api.example.com:443", `403 Forbidden`},
		{"both.example.com:443", `2001:db8::7 (denied by "[2001:db8::7]:443")`},
	} {
		if got := rawConnect(t, f.addr, tt.hostport); !strings.Contains(got, tt.want) || !strings.Contains(got, `203.0.113.10 (denied by "203.0.113.10")`) {
			t.Errorf("CONNECT %s: %q, want %q and the denied 203.0.113.10", tt.hostport, got, tt.want)
		}
	}
	for _, dialed := range f.net.dialed {
		t.Errorf("the proxy dialled the denied %s", dialed)
	}
}
