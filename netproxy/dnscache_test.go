package netproxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// flipNet answers a name with the addresses of answers in turn, one
// answer per lookup (the last repeats), counts lookups, and routes
// 203.0.113.10:80 to a test server; it records every address dialled.
type flipNet struct {
	mu      sync.Mutex
	answers [][]string
	lookups int
	dialed  []string
	server  string
}

func (n *flipNet) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	a := n.answers[min(n.lookups, len(n.answers)-1)]
	n.lookups++
	var out []netip.Addr
	for _, s := range a {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func (n *flipNet) dial(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	n.mu.Lock()
	n.dialed = append(n.dialed, ap.String())
	n.mu.Unlock()
	if ap.String() != "203.0.113.10:80" {
		return nil, fmt.Errorf("test network: no route to %s", ap)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", n.server)
}

// cachedProxy serves a proxy allowing rebind.example.com on fn's network,
// with a clock the test moves (the returned offset, in nanoseconds).
func cachedProxy(t *testing.T, fn *flipNet) (string, *atomic.Int64) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	t.Cleanup(srv.Close)
	fn.server = srv.Listener.Addr().String()
	pol, err := NewPolicy([]string{"rebind.example.com"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Policy: pol, Resolve: fn.resolve, Dial: fn.dial})
	if err != nil {
		t.Fatal(err)
	}
	var offset atomic.Int64
	base := time.Now()
	p.clock = func() time.Time { return base.Add(time.Duration(offset.Load())) }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	return ln.Addr().String(), &offset
}

// get makes one plain HTTP request for rebind.example.com through proxy
// and returns the status line.
func get(t *testing.T, proxy string) string {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprint(c, "GET http://rebind.example.com/ HTTP/1.1\r\nHost: rebind.example.com\r\nConnection: close\r\n\r\n")
	buf := make([]byte, 4096)
	n, _ := c.Read(buf)
	line, _, _ := strings.Cut(string(buf[:n]), "\r\n")
	return line
}

// TestResolveCacheKeepsChecks: answers are cached, not verdicts. A name
// first answering a public address and then loopback (DNS rebinding) is
// dialled at the public address from the cache, and once the cache
// expires the loopback answer is refused and never dialled; a refused
// answer stays refused from the cache.
func TestResolveCacheKeepsChecks(t *testing.T) {
	fn := &flipNet{answers: [][]string{{"203.0.113.10"}, {"127.0.0.1"}}}
	proxy, offset := cachedProxy(t, fn)
	for i := range 3 {
		if line := get(t, proxy); !strings.Contains(line, " 200 ") {
			t.Fatalf("request %d: %q, want 200", i, line)
		}
	}
	fn.mu.Lock()
	lookups := fn.lookups
	fn.mu.Unlock()
	if lookups != 1 {
		t.Errorf("%d lookups for 3 requests within the cache's lifetime, want 1", lookups)
	}
	offset.Store(int64(dnsCacheTTL))
	for i := range 2 {
		if line := get(t, proxy); !strings.Contains(line, " 403 ") {
			t.Errorf("request %d after the answer turned to loopback: %q, want 403", i, line)
		}
	}
	fn.mu.Lock()
	defer fn.mu.Unlock()
	for _, d := range fn.dialed {
		if d != "203.0.113.10:80" {
			t.Errorf("dialled %s", d)
		}
	}
	if fn.lookups != 2 {
		t.Errorf("%d lookups, want 2 (one before and one after expiry)", fn.lookups)
	}
}

func TestDNSCacheBounded(t *testing.T) {
	var c dnsCache
	now := time.Now()
	a := []netip.Addr{netip.MustParseAddr("203.0.113.10")}
	for i := range 3 * dnsCacheMax {
		c.store(fmt.Sprintf("h%d.example.com", i), a, now)
		if len(c.m) > dnsCacheMax {
			t.Fatalf("%d entries after %d stores, want at most %d", len(c.m), i+1, dnsCacheMax)
		}
	}
	name := fmt.Sprintf("h%d.example.com", 3*dnsCacheMax-1)
	if got, ok := c.lookup(name, now); !ok || len(got) != 1 || got[0] != a[0] {
		t.Errorf("lookup(%s) = %v, %v", name, got, ok)
	}
	if _, ok := c.lookup(name, now.Add(dnsCacheTTL)); ok {
		t.Errorf("lookup(%s) at expiry found an answer", name)
	}
	// The caller's slice is the caller's: changing it leaves the cache.
	got, _ := c.lookup(name, now)
	got[0] = netip.MustParseAddr("127.0.0.1")
	if again, _ := c.lookup(name, now); again[0] != a[0] {
		t.Errorf("the cached answer changed with the caller's copy: %v", again)
	}
}
