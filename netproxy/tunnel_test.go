package netproxy

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// openTunnel sends CONNECT hostport to the proxy and returns the
// connection once the proxy answered 200.
func openTunnel(t *testing.T, proxy, hostport string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostport, hostport)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Byte by byte: nothing after the response's head may be consumed.
	var head []byte
	one := make([]byte, 1)
	for !strings.HasSuffix(string(head), "\r\n\r\n") {
		if _, err := c.Read(one); err != nil {
			t.Fatalf("CONNECT %s: %v after %q", hostport, err, head)
		}
		head = append(head, one[0])
	}
	if !strings.HasPrefix(string(head), "HTTP/1.1 200 ") {
		t.Fatalf("CONNECT %s: %q", hostport, head)
	}
	c.SetReadDeadline(time.Time{})
	return c
}

// tlsGet makes one HTTPS request through a tunnel to hostport with the
// TLS server name sni ("" sends none), closes the tunnel and returns the
// response's first line.
func tlsGet(t *testing.T, proxy, hostport, sni string) (string, error) {
	t.Helper()
	c := openTunnel(t, proxy, hostport)
	defer c.Close()
	tc := tls.Client(c, &tls.Config{ServerName: sni, InsecureSkipVerify: true})
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		return "", err
	}
	fmt.Fprintf(tc, "GET /sni HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", hostport)
	line, err := bufio.NewReader(tc).ReadString('\n')
	return strings.TrimSpace(line), err
}

// lastConnection waits for the proxy to log n connections and returns the
// last.
func lastConnection(t *testing.T, p *Proxy, n int) Connection {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := p.Report()
		if len(r.Connections) >= n {
			return r.Connections[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d connections logged, want %d: %+v", len(r.Connections), n, r)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTunnelSNI is the attack test of the SNI check: through a tunnel to
// an allowed host, a crypto/tls client asks the same address for another
// site (its ServerName). The proxy refuses the tunnel with a TLS alert
// before a byte reaches the server, and logs why; a matching or absent
// name passes.
func TestTunnelSNI(t *testing.T) {
	tests := []struct {
		name, hostport, sni string
		reason              string // "" when the request must succeed
	}{
		{"matching name", "api.example.com:443", "api.example.com", ""},
		{"name in another case", "api.example.com:443", "API.EXAMPLE.COM", ""},
		{"CONNECT name with a trailing dot", "api.example.com.:443", "api.example.com", ""},
		{"no server name", "api.example.com:443", "", ""},
		{"another site on the same address", "api.example.com:443", "www.example.com", "TLS server name (SNI) www.example.com differs from the CONNECT host api.example.com"},
		{"a name under the allowed one", "api.example.com:443", "evil.api.example.com", "differs from the CONNECT host api.example.com"},
		{"a name through an IP grant", "203.0.113.10:443", "www.example.com", "differs from the CONNECT host 203.0.113.10"},
		{"TLS on another port, matching", "api.example.com:8443", "api.example.com", ""},
		{"TLS on another port, another site", "api.example.com:8443", "www.example.com", "differs from the CONNECT host api.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, []string{"api.example.com", "api.example.com:8443", "203.0.113.10"}, nil)
			f.net.routes["203.0.113.10:8443"] = f.net.routes["203.0.113.10:443"]
			line, err := tlsGet(t, f.addr, tt.hostport, tt.sni)
			e := lastConnection(t, f.proxy, 1)
			if tt.reason == "" {
				if err != nil || line != "HTTP/1.1 200 OK" || !e.Allowed || e.BytesUp == 0 {
					t.Errorf("got %q, %v; connection %+v", line, err, e)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "unrecognized name") {
				t.Errorf("handshake: %q, %v; want the unrecognized_name alert", line, err)
			}
			if e.Allowed || !strings.Contains(e.Reason, tt.reason) || e.BytesUp != 0 || e.Addr == "" || e.Method != "CONNECT" {
				t.Errorf("connection %+v, want refused with %q and nothing sent up", e, tt.reason)
			}
			if d := f.denied.String(); !strings.HasPrefix(d, "skill-sandbox: network: denied CONNECT "+tt.hostport+": TLS server name (SNI) ") || !strings.Contains(d, tt.reason) {
				t.Errorf("denied lines:\n%s", f.denied.String())
			}
		})
	}
}

// TestTunnelFirstBytes: port 443 carries TLS only (plain bytes, a
// malformed hello or none in time are refused); on another port plain
// bytes pass on the host's grant, and a server that speaks first is heard
// before the client sends anything.
func TestTunnelFirstBytes(t *testing.T) {
	greeter, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer greeter.Close()
	go func() {
		for {
			c, err := greeter.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, "220 hello\r\n")
				io.Copy(c, c)
			}()
		}
	}()
	f := newFixture(t, []string{"api.example.com", "api.example.com:25"}, nil, func(c *Config) { c.HeaderTimeout = 300 * time.Millisecond })
	f.net.routes["203.0.113.10:25"] = greeter.Addr().String()

	hello := helloBody(ext(0, sniData(nil, "api.example.com", "www.example.com")))
	for i, tt := range []struct {
		name   string
		send   []byte
		answer []byte // what the client reads before the tunnel closes
		reason string
	}{
		{"plain HTTP on 443", []byte("GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n"), nil,
			"first byte 0x47 does not start a TLS handshake: port 443 carries TLS only"},
		{"nothing on 443", nil, nil, "no TLS ClientHello within 300ms"},
		{"malformed hello on 443", append([]byte{0x16, 3, 1, byte(len(hello) >> 8), byte(len(hello))}, hello...), alertRecord(alertDecodeError),
			"malformed TLS ClientHello: server_name lists more than one name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := openTunnel(t, f.addr, "api.example.com:443")
			c.Write(tt.send)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if b, err := io.ReadAll(c); string(b) != string(tt.answer) || isTimeout(err) {
				t.Errorf("read % x, %v; want % x and the tunnel closed", b, err, tt.answer)
			}
			if e := lastConnection(t, f.proxy, i+1); e.Allowed || !strings.Contains(e.Reason, tt.reason) {
				t.Errorf("connection %+v, want refused with %q", e, tt.reason)
			}
		})
	}
	t.Run("plain HTTP on 80", func(t *testing.T) {
		c := openTunnel(t, f.addr, "api.example.com:80")
		io.WriteString(c, "GET /plain HTTP/1.1\r\nHost: api.example.com\r\nConnection: close\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(c)
		c.Close()
		if !strings.HasPrefix(string(b), "HTTP/1.1 200 ") || !strings.Contains(string(b), "hello from api.example.com /plain") {
			t.Errorf("response %q", b)
		}
		if e := lastConnection(t, f.proxy, 4); !e.Allowed {
			t.Errorf("connection %+v", e)
		}
	})
	t.Run("server speaks first", func(t *testing.T) {
		c := openTunnel(t, f.addr, "api.example.com:25")
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		if line, err := br.ReadString('\n'); line != "220 hello\r\n" {
			t.Fatalf("greeting %q, %v", line, err)
		}
		io.WriteString(c, "QUIT\r\n")
		if line, err := br.ReadString('\n'); line != "QUIT\r\n" {
			t.Errorf("echo %q, %v", line, err)
		}
	})
}

// TestTunnelSNICurl: curl through the proxy, told by --connect-to to
// tunnel to the allowed api.example.com while asking (SNI and Host) for
// www.example.com, is refused; the same curl without the redirection
// gets its page.
func TestTunnelSNICurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed")
	}
	f := newFixture(t, []string{"api.example.com"}, nil)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(curl, append([]string{"-sS", "-k", "--max-time", "10", "--noproxy", "", "-x", "http://" + f.addr}, args...)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("https://api.example.com/ok")
	if err != nil || !strings.Contains(out, "hello from api.example.com /ok") {
		t.Fatalf("allowed request: %v\n%s", err, out)
	}
	out, err = run("--connect-to", "www.example.com:443:api.example.com:443", "https://www.example.com/fronted")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || strings.Contains(out, "hello from") {
		t.Errorf("fronted request: %v\n%s", err, out)
	}
	e := lastConnection(t, f.proxy, 2)
	if e.Allowed || e.Host != "api.example.com" || !strings.Contains(e.Reason, "TLS server name (SNI) www.example.com differs from the CONNECT host api.example.com") {
		t.Errorf("connection %+v (curl said %s)", e, out)
	}
}
