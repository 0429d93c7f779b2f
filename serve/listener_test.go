package serve

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestMaxConns: clients without a token that hold idle connections take
// at most MaxConns of them; the next one waits until one closes, and is
// then served. Without the bound every connection is served at once, and
// 8000 idle ones took 8000 file descriptors of a real server.
func TestMaxConns(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxConns = 3 })
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := f.srv.HTTPServer()
	go hs.Serve(f.srv.Listener(raw))
	defer hs.Close()
	addr := raw.Addr().String()
	var idle []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n") // headers never finished
		idle = append(idle, c)
	}
	next, err := net.Dial("tcp", addr) // the kernel's backlog takes it
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	fmt.Fprint(next, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	next.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	rd := bufio.NewReader(next)
	if resp, err := http.ReadResponse(rd, nil); err == nil {
		t.Fatalf("a fourth connection was served past MaxConns 3: %s", resp.Status)
	}
	idle[0].Close()
	next.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatalf("the waiting connection, once a slot was free: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d", resp.StatusCode)
	}
}
