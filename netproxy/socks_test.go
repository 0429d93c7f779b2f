package netproxy

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// echoServer is a loopback TCP server that echoes what it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// socksConnect is a SOCKS5 CONNECT request to host (a domain name, or
// an IPv4/IPv6 literal sent as an address) and port.
func socksConnect(cmd byte, host string, port int) []byte {
	b := []byte{5, cmd, 0}
	if a, err := net.ResolveIPAddr("ip", host); err == nil && net.ParseIP(host) != nil {
		if v4 := a.IP.To4(); v4 != nil {
			b = append(append(b, 1), v4...)
		} else {
			b = append(append(b, 4), a.IP.To16()...)
		}
	} else {
		b = append(append(b, 3, byte(len(host))), host...)
	}
	return binary.BigEndian.AppendUint16(b, uint16(port))
}

// socksDial sends a greeting and req to the proxy at addr and returns the
// connection and the reply code (or -1 when the proxy closed first).
func socksDial(t *testing.T, addr string, req []byte) (net.Conn, int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write(append([]byte{5, 1, 0}, req...))
	var resp [12]byte
	if _, err := io.ReadFull(c, resp[:2]); err != nil || resp[1] != 0 {
		return c, -1
	}
	if _, err := io.ReadFull(c, resp[2:12]); err != nil {
		return c, -1
	}
	return c, int(resp[3])
}

func socksNet(t *testing.T) *testNet {
	echo := echoServer(t)
	return &testNet{
		names: map[string][]string{
			"db.example.com":    {"203.0.113.20"},
			"local.example.com": {"127.0.0.1"},
			"meta.example.com":  {"169.254.169.254"},
		},
		routes: map[string]string{"203.0.113.20:5432": echo, "203.0.113.20:443": echo, "203.0.113.20:5433": echo},
	}
}

func TestSOCKSConnect(t *testing.T) {
	n := socksNet(t)
	p, addr := startProxy(t, Config{Resolve: n.resolve, Dial: n.dial}, []string{"db.example.com:5432"}, nil)
	c, rep := socksDial(t, addr, socksConnect(1, "DB.example.com.", 5432))
	if rep != 0 {
		t.Fatalf("reply %d, want 0 (succeeded)", rep)
	}
	c.Write([]byte("\x00\x00\x00\x08\x04\xd2\x16\x2f")) // a PostgreSQL SSLRequest: not TLS, relayed as is
	got := make([]byte, 8)
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, []byte("\x00\x00\x00\x08\x04\xd2\x16\x2f")) {
		t.Fatalf("echo %q, %v", got, err)
	}
	c.Close()
	p.Close()
	r := p.Report()
	if len(r.Connections) != 1 {
		t.Fatalf("report %+v", r)
	}
	e := r.Connections[0]
	if e.Method != "SOCKS5" || !e.Allowed || e.Host != "db.example.com" || e.Port != 5432 || e.Addr != "203.0.113.20:5432" || e.Rule == "" || e.BytesUp != 8 {
		t.Errorf("record %+v", e)
	}
}

// TestSOCKSRefused is the attack table: every request the policy or the
// address checks refuse gets a failure reply, nothing is dialled, and
// the record says why and what would allow it.
func TestSOCKSRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		req    []byte
		rep    int    // reply code; -1: the greeting is refused
		reason string // in the record's reason
		remedy string // in the record's remedy
	}{
		{"port not granted", socksConnect(1, "db.example.com", 5433), 2, "not in the allow list", "--allow-host db.example.com:5433"},
		{"host not granted", socksConnect(1, "other.example.com", 5432), 2, "not in the allow list", "--allow-host other.example.com:5432"},
		{"loopback literal", socksConnect(1, "127.0.0.1", 5432), 2, "is an IP address", "--allow-host 127.0.0.1:5432"},
		{"loopback name", socksConnect(1, "local.example.com", 5432), 2, "loopback", "only an explicit IP grant"},
		{"metadata address", socksConnect(1, "169.254.169.254", 80), 2, "is an IP address", ""},
		{"metadata by name", socksConnect(1, "meta.example.com", 5432), 2, "link-local", ""},
		{"metadata name", socksConnect(1, "metadata.google.internal", 80), 2, "metadata", "nothing"},
		{"IPv4-mapped loopback", socksConnect(1, "::ffff:127.0.0.1", 5432), 2, "127.0.0.1:5432 is an IP address", ""},
		{"BIND", socksConnect(2, "db.example.com", 5432), 7, "BIND is not served", "SOCKS5 CONNECT"},
		{"UDP ASSOCIATE", socksConnect(3, "db.example.com", 5432), 7, "UDP ASSOCIATE is not served", "SOCKS5 CONNECT"},
		{"unknown command", socksConnect(9, "db.example.com", 5432), 7, "command 9", ""},
		{"unknown address type", []byte{5, 1, 0, 7, 1, 2, 3, 4, 0, 22}, 8, "address type 7", ""},
		{"port 0", socksConnect(1, "db.example.com", 0), 1, "port 0", ""},
		{"bad name", socksConnect(1, "db.example.com/x", 5432), 1, "SOCKS request", ""},
		{"empty name", []byte{5, 1, 0, 3, 0, 0, 22}, 1, "empty host name", ""},
		{"reserved byte", []byte{5, 1, 1, 1, 1, 2, 3, 4, 0, 22}, 1, "reserved byte", ""},
		{"TLS port without TLS", socksConnect(1, "db.example.com", 443), 0, "does not start a TLS handshake", "port 443 carries TLS only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := socksNet(t)
			p, addr := startProxy(t, Config{Resolve: n.resolve, Dial: n.dial}, []string{"db.example.com:5432", "db.example.com", "metadata.google.internal", "local.example.com:5432", "meta.example.com:5432"}, nil)
			c, rep := socksDial(t, addr, tc.req)
			if rep != tc.rep {
				t.Fatalf("reply %d, want %d", rep, tc.rep)
			}
			if rep == 0 {
				c.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
				io.Copy(io.Discard, c)
			}
			p.Close()
			r := p.Report()
			if len(r.Connections) != 1 || r.Denied != 1 {
				t.Fatalf("report %+v", r)
			}
			e := r.Connections[0]
			if e.Allowed || !strings.Contains(e.Reason, tc.reason) || !strings.Contains(e.Remedy, tc.remedy) || e.Remedy == "" {
				t.Errorf("record reason %q remedy %q, want %q and %q", e.Reason, e.Remedy, tc.reason, tc.remedy)
			}
			if tc.rep != 0 && len(n.dialed) != 0 {
				t.Errorf("dialled %v for a refused request", n.dialed)
			}
		})
	}
}

// TestSOCKSBadGreeting: greetings the proxy does not serve are closed
// with the refusal RFC 1928 defines (0xff) or without a reply.
func TestSOCKSBadGreeting(t *testing.T) {
	for _, tc := range []struct {
		name, greeting, want string
	}{
		{"only user/password", "\x05\x01\x02", "\x05\xff"},
		{"no methods", "\x05\x00", "\x05\xff"},
		{"GSSAPI and user/password", "\x05\x02\x01\x02", "\x05\xff"},
		{"truncated", "\x05\x05\x00", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, addr := startProxy(t, Config{HeaderTimeout: 300 * time.Millisecond}, []string{"db.example.com:5432"}, nil)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			c.Write([]byte(tc.greeting))
			got, err := io.ReadAll(c)
			if err != nil || string(got) != tc.want {
				t.Fatalf("reply %q (%v), want %q then close", got, err, tc.want)
			}
			p.Close()
			if r := p.Report(); r.Allowed != 0 || r.Denied != 1 {
				t.Errorf("report %+v", r)
			}
		})
	}
}

// TestSOCKSSlowloris: a client that sends its greeting a byte at a time,
// or never finishes its request, is cut off at HeaderTimeout and frees
// its slot, so that MaxConns such clients cannot hold the proxy.
func TestSOCKSSlowloris(t *testing.T) {
	n := socksNet(t)
	p, addr := startProxy(t, Config{Resolve: n.resolve, Dial: n.dial, HeaderTimeout: 300 * time.Millisecond, MaxConns: 2}, []string{"db.example.com:5432"}, nil)
	var slow []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte{5, 1}) // and never the method
		slow = append(slow, c)
	}
	time.Sleep(50 * time.Millisecond) // both taken their slot
	// A third is turned away while both are held (a 503 it does not
	// understand, then close): bounded, not queued.
	c3, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c3.SetDeadline(time.Now().Add(10 * time.Second))
	c3.Write([]byte{5, 1, 0})
	if got, _ := io.ReadAll(c3); !bytes.HasPrefix(got, []byte("HTTP/1.1 503")) {
		t.Errorf("third connection got %q, want the 503 of a full proxy", got)
	}
	for _, c := range slow {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadAll(c); err != nil {
			t.Errorf("slow client not closed by HeaderTimeout: %v", err)
		}
	}
	// Their slots are free again.
	if _, rep := socksDial(t, addr, socksConnect(1, "db.example.com", 5432)); rep != 0 {
		t.Errorf("after the slow clients, reply %d", rep)
	}
	p.Close()
	r := p.Report()
	timedOut := 0
	for _, e := range r.Connections {
		if strings.Contains(e.Reason, "not received in time") {
			timedOut++
		}
	}
	if timedOut != 2 {
		t.Errorf("%d timed out, want 2: %+v", timedOut, r.Connections)
	}
}
