package mcp

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// smallSendBuffers shrinks the send buffer of every accepted connection,
// so that a response of a few hundred kilobytes fills what the kernel
// holds for a client that does not read.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestHTTPStalledReader checks that a client that sends requests whose
// answers are large and then never reads them does not keep their request
// slots, nor Close, waiting for ever: the answer's write is bounded in
// time, as the body's read is.
func TestHTTPStalledReader(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("resources/read needs openat2 (Linux)")
	}
	dir := skillsDir(t)
	if err := os.WriteFile(filepath.Join(dir, "probe", "references", "huge.txt"), []byte(strings.Repeat("y", 3<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, accept := range []string{"application/json", "text/event-stream"} {
		t.Run(accept, func(t *testing.T) {
			srv, err := NewServer(Config{SkillDirs: []string{dir}, MaxFileBytes: 4 << 20})
			if err != nil {
				t.Fatal(err)
			}
			h, err := srv.HTTPHandler(HTTPOptions{})
			if err != nil {
				t.Fatal(err)
			}
			h.writeTimeout = 200 * time.Millisecond
			ts := httptest.NewUnstartedServer(h)
			ts.Listener = smallSendBuffers{ts.Listener}
			ts.Start()
			defer ts.Close()
			defer h.Close()
			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.(*net.TCPConn).SetReadBuffer(4096)
			meta, _ := json.Marshal(statelessMeta())
			body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"skill://probe/references/huge.txt","_meta":` + string(meta) + `}}`
			fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: %s\r\n"+
				"Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: resources/read\r\nMcp-Name: skill://probe/references/huge.txt\r\n"+
				"Content-Length: %d\r\n\r\n%s", accept, len(body), body)
			// The answer has begun; the client reads no more of it.
			conn.SetReadDeadline(time.Now().Add(30 * time.Second))
			if n, err := conn.Read(make([]byte, 1)); err != nil || n == 0 {
				t.Fatal(err)
			}
			// Close waits for the requests in
			// progress: it returns only once the stalled write has given up.
			closed := make(chan struct{})
			go func() { h.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(30 * time.Second):
				t.Fatal("Close still waits, 30s on, for a request whose client does not read its answer")
			}
		})
	}
}

// TestSSEStopStalledKeepAlive checks that stop returns when a keep-alive
// waits behind a message whose write is stalled by a client that does
// not read: the write deadline must come before stop waits for the
// keep-alive to end.
func TestSSEStopStalledKeepAlive(t *testing.T) {
	stopped := make(chan struct{})
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := startSSE(w, time.Millisecond)
		go s.Write([]byte(strings.Repeat("z", 4<<20))) // blocks: nobody reads
		time.Sleep(200 * time.Millisecond)             // many keep-alive ticks meanwhile
		s.stop()
		close(stopped)
	}))
	ts.Listener = smallSendBuffers{ts.Listener}
	ts.Start()
	defer ts.Close()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("stop still waits, 30s on, for a keep-alive stuck behind a stalled write")
	}
}
