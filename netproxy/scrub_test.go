package netproxy

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// scrubTestSecrets are the secrets of the scrubbing tests: one for
// api.example.com whose value escapes differently in a query and a path.
func scrubTestSecrets(t testing.TB) (*Secrets, target, string) {
	s, err := NewSecrets([]Secret{{Name: "T", Host: "api.example.com", Port: 443, Value: "v@l ue/x"}})
	if err != nil {
		t.Fatal(err)
	}
	tgt, _ := parseTarget("api.example.com:443", 0)
	return s, tgt, s.list[0].placeholder
}

// scrubAll reads a server stream through a scrubConn.
func scrubAll(s *Secrets, t target, in string) (string, error) {
	c := &scrubConn{br: bufio.NewReaderSize(strings.NewReader(in), 4<<10), swap: s.scrubber(t)}
	b, err := io.ReadAll(c)
	return string(b), err
}

func TestScrubConn(t *testing.T) {
	s, tgt, ph := scrubTestSecrets(t)
	const v, qv, pv = "v@l ue/x", "v%40l+ue%2Fx", "v@l%20ue%2Fx"
	tests := []struct {
		name, in, want string
		err            error
	}{
		{"header values", "HTTP/1.1 200 OK\r\nA: " + v + "\r\nLocation: /?k=" + qv + "\r\nL: /" + pv + "\r\nContent-Length: 0\r\n\r\n",
			"HTTP/1.1 200 OK\r\nA: " + ph + "\r\nLocation: /?k=" + ph + "\r\nL: /" + ph + "\r\nContent-Length: 0\r\n\r\n", nil},
		{"body unchanged", "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n" + v + "\r\nA: " + v,
			"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n" + v + "\r\nA: " + v, nil},
		{"1xx then final", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: " + v + "\r\n\r\nHTTP/1.1 200 OK\r\nX: " + v + "\r\n\r\n" + v,
			"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: " + ph + "\r\n\r\nHTTP/1.1 200 OK\r\nX: " + ph + "\r\n\r\n" + v, nil},
		{"101 ends the heads", "HTTP/1.1 101 Switching Protocols\r\n\r\n" + v, "HTTP/1.1 101 Switching Protocols\r\n\r\n" + v, nil},
		{"status and framing kept", "HTTP/1.1 200 " + v + "\r\nTransfer-Encoding: " + v + "\r\n\r\n", "HTTP/1.1 200 " + v + "\r\nTransfer-Encoding: " + v + "\r\n\r\n", nil},
		{"bad name: whole line", "HTTP/1.1 200 OK\r\n" + v + "\r\n\r\n", "HTTP/1.1 200 OK\r\n" + ph + "\r\n\r\n", nil},
		{"not HTTP", "SSH-2.0 " + v + "\r\n", "", errResponseHead},
		{"head too large", "HTTP/1.1 200 OK\r\n" + strings.Repeat("A: "+strings.Repeat("a", 1000)+"\r\n", 70), "", errResponseHead},
		{"line longer than the buffer", "HTTP/1.1 200 OK\r\nA: " + strings.Repeat("a", 5000) + v + "\r\n\r\n",
			"HTTP/1.1 200 OK\r\nA: " + strings.Repeat("a", 5000) + ph + "\r\n\r\n", nil},
		{"line too long", "HTTP/1.1 200 OK\r\nA: " + strings.Repeat("a", 70000) + "\r\n\r\n", "", errResponseHead},
		{"cut short: the partial line is dropped", "HTTP/1.1 200 OK\r\nA: " + v, "HTTP/1.1 200 OK\r\n", nil},
	}
	for _, tt := range tests {
		got, err := scrubAll(s, tgt, tt.in)
		if !errors.Is(err, tt.err) || tt.err == nil && got != tt.want {
			t.Errorf("%s: got %.120q, %v; want %.120q, %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}

// TestScrubConnGrowth: a head full of a one-byte value would grow 85
// times with the placeholders; past twice maxResponseHead the connection
// ends instead.
func TestScrubConnGrowth(t *testing.T) {
	s, err := NewSecrets([]Secret{{Name: "T", Host: "api.example.com", Port: 443, Value: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	tgt, _ := parseTarget("api.example.com:443", 0)
	in := "HTTP/1.1 200 OK\r\n" + strings.Repeat("A: "+strings.Repeat("1", 1000)+"\r\n", 60) + "\r\n"
	if out, err := scrubAll(s, tgt, in); !errors.Is(err, errResponseHead) || len(out) > 2*maxResponseHead {
		t.Errorf("%d bytes, %v", len(out), err)
	}
	if out, err := scrubAll(s, tgt, "HTTP/1.1 200 OK\r\nA: 11\r\n\r\n"); err != nil || strings.Count(out, placeholderPrefix) != 2 {
		t.Errorf("%q, %v", out, err)
	}
}

// timeoutErr is a read deadline passing.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// stepReader returns its parts one by one, each followed by a timeout.
type stepReader struct {
	parts   []string
	timeout bool
}

func (r *stepReader) Read(p []byte) (int, error) {
	if r.timeout {
		r.timeout = false
		return 0, timeoutErr{}
	}
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.parts[0])
	r.parts, r.timeout = r.parts[1:], true
	return n, nil
}

// TestScrubConnTimeout: a slow server whose header line, with the value
// in it, arrives in parts with read timeouts between (which the relay
// waits out while the client sends) still has the whole value replaced.
func TestScrubConnTimeout(t *testing.T) {
	s, tgt, ph := scrubTestSecrets(t)
	v := s.list[0].Value
	r := &stepReader{parts: []string{"HTTP/1.1 200 OK\r\nA: " + v[:3], v[3:] + "\r\n", "\r\nbody"}}
	c := &scrubConn{br: bufio.NewReaderSize(r, 4<<10), swap: s.scrubber(tgt)}
	var out []byte
	buf := make([]byte, 64)
	for {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil && !isTimeout(err) {
			t.Fatal(err)
		}
	}
	if want := "HTTP/1.1 200 OK\r\nA: " + ph + "\r\n\r\nbody"; string(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

// FuzzScrubConn feeds arbitrary server streams through the scrubbing of
// response heads: it must never panic, never change a stream that holds
// no value, and never grow one by more than the placeholders it puts in.
func FuzzScrubConn(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nA: V\r\nContent-Length: 1\r\n\r\nV",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 302 Found\r\nLocation: /?k=V\r\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\n\r\nV",
		"HTTP/1.0 200\nV\n\n",
	} {
		f.Add([]byte(s))
	}
	s, tgt, ph := scrubTestSecrets(f)
	v := s.list[0].Value
	f.Fuzz(func(t *testing.T, data []byte) {
		in := strings.ReplaceAll(string(data), "V", v)
		out, err := scrubAll(s, tgt, in)
		if err != nil && !errors.Is(err, errResponseHead) {
			t.Fatalf("error %v", err)
		}
		if len(out) > len(in)+strings.Count(out, ph)*len(ph) {
			t.Fatalf("%d bytes out of %d", len(out), len(in))
		}
		if err == nil && !strings.Contains(in, v) && !strings.Contains(in, "%") && out != in[:len(out)] {
			t.Fatalf("changed a stream without a value: %q to %q", in, out)
		}
	})
}
