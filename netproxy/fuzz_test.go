package netproxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// FuzzReadHead feeds arbitrary bytes to the request head parser: it must
// never panic, never accept more than the size cap, and whatever it
// accepts must name a target the policy code can judge.
func FuzzReadHead(f *testing.F) {
	for _, s := range []string{
		"CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n",
		"GET http://example.com/a?b#c HTTP/1.1\r\nConnection: x, keep-alive\r\nX: y\r\n\r\n",
		"GET http://[::1]:8080/ HTTP/1.0\r\n\r\n",
		"POST http://example.com/ HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\n",
		"POST http://example.com/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\n\r\n",
		"CONNECT a:1 HTTP/1.1\r\n folded\r\n\r\n",
		"\r\n",
	} {
		f.Add([]byte(s))
	}
	pol, err := NewPolicy([]string{"*.example.com", "example.com:8080", "[::1]:8080"}, []string{"bad.example.com"})
	if err != nil {
		f.Fatal(err)
	}
	const max = 1024
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := readHead(bufio.NewReaderSize(strings.NewReader(string(data)), 256), max)
		if err != nil {
			return
		}
		if len(data) > max && strings.Index(string(data), "\r\n\r\n") > max {
			t.Fatalf("accepted a head over %d bytes", max)
		}
		if req.target.port < 1 || req.target.port > 65535 {
			t.Fatalf("port %d", req.target.port)
		}
		if req.target.host == "" && !req.target.addr.IsValid() {
			t.Fatal("empty target")
		}
		pol.check(req.target)
		if req.method != "CONNECT" {
			// The proxy and the server must agree where the body ends:
			// never both framings, never a length the head does not say.
			var te, cl int
			for _, h := range req.headers {
				switch strings.ToLower(h.name) {
				case "transfer-encoding":
					te++
				case "content-length":
					cl++
				}
			}
			if te > 0 && (cl > 0 || !req.framing.chunked) || te == 0 && req.framing.chunked ||
				cl == 0 && req.framing.length != 0 || req.framing.length < 0 {
				t.Fatalf("framing %+v for %d Transfer-Encoding and %d Content-Length headers", req.framing, te, cl)
			}
			head := string(req.upstreamHead())
			if strings.Count(head, "\r\n\r\n") != 1 || !strings.HasSuffix(head, "\r\n\r\n") {
				t.Fatalf("upstream head is not one head: %q", head)
			}
		}
	})
}

// FuzzPattern checks that a pattern that parses matches its own host and
// that parsing never panics.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"api.example.com", "*.example.com:8443", "[::1]:80", "203.0.113.7", "Ex.COM.", "127.1", "xn--bcher-kva.ch"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePattern(s)
		if err != nil {
			return
		}
		if p.String() != s {
			t.Fatalf("String() = %q, want %q", p.String(), s)
		}
		port := p.port
		if port == 0 {
			port = 443
		}
		tg := target{host: p.host, addr: p.addr, port: port}
		if p.wildcard {
			tg.host = "x." + p.host
		}
		if !p.matches(tg) {
			t.Fatalf("pattern %q does not match %v", s, tg)
		}
		if p.wildcard && p.matches(target{host: p.host, port: port}) {
			t.Fatalf("wildcard %q matches its base name", s)
		}
		if _, err := parseTarget(tg.String(), 0); err != nil {
			t.Fatalf("target %v of pattern %q does not parse back: %v", tg, s, err)
		}
	})
}

// FuzzClientHello feeds arbitrary bytes to the first-record parsers of a
// tunnel: they must never panic; a name they return is 1-255 bytes and is
// judged without panicking; and a record that parses, with its length
// bytes changed to claim one byte more, must not parse (every length is
// checked against its container).
func FuzzClientHello(f *testing.F) {
	for _, cfg := range []*tls.Config{
		{ServerName: "api.example.com"},
		{InsecureSkipVerify: true},
		{ServerName: "a.example", MaxVersion: tls.VersionTLS12},
	} {
		f.Add(clientHello(f, cfg))
	}
	f.Add(append([]byte{0x16, 3, 1, 0, 0}, helloBody(ext(0, sniData(nil, "a.example")))...))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	target := target{host: "api.example.com", port: 443}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < recordHeaderLen {
			return
		}
		parseRecordHeader(data[:recordHeaderLen])
		body := data[recordHeaderLen:]
		name, err := parseClientHello(body)
		if err != nil {
			return
		}
		if name != "" && len(name) > maxServerNameLen {
			t.Fatalf("server name of %d bytes", len(name))
		}
		sniMismatch(name, target)
		if len(body) >= 4 {
			longer := append([]byte(nil), body...)
			n := int(longer[1])<<16 | int(longer[2])<<8 | int(longer[3]) + 1
			longer[1], longer[2], longer[3] = byte(n>>16), byte(n>>8), byte(n)
			if _, err := parseClientHello(longer); err == nil {
				t.Fatalf("a ClientHello claiming one byte more than it has parsed: % x", longer)
			}
		}
	})
}

// FuzzChunkedBody feeds arbitrary bytes to the chunked body framing: it
// must never panic, pass on only a prefix of its input, unchanged, and
// never pass on more than the input had.
func FuzzChunkedBody(f *testing.F) {
	for _, s := range []string{
		"5\r\nhello\r\n0\r\n\r\n",
		"5;a=b\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-T: 1\r\n\r\nGET / HTTP/1.1\r\n\r\n",
		"1\r\nhello\r\n0\r\n\r\n",
		"fffffffffffffff\r\n",
		"0\r\n\r\n",
		"\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		body := framing{chunked: true}.body(bufio.NewReaderSize(bytes.NewReader(data), 16), 256)
		out, err := io.ReadAll(body)
		if !bytes.HasPrefix(data, out) {
			t.Fatalf("passed on %q, not a prefix of %q", out, data)
		}
		if err != nil {
			return
		}
		// A body the proxy passed on whole must end where a real server
		// (net/http's) ends it: what follows is a second request, which
		// the server must not read as part of the first.
		stream := "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + string(out) + "GET /second HTTP/1.1\r\nHost: x\r\n\r\n"
		sr := bufio.NewReader(strings.NewReader(stream))
		req, err := http.ReadRequest(sr)
		if err != nil {
			t.Fatalf("net/http reads no request: %v", err)
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return // the server refuses the body: it sees no second request either
		}
		if next, err := http.ReadRequest(sr); err != nil || next.URL.Path != "/second" {
			t.Fatalf("after the body %q net/http reads %v, %v, not the next request", out, next, err)
		}
	})
}

// FuzzParseSecret feeds arbitrary specs to the --secret parser: it must
// never panic, and what it accepts must format to a spec it reads back
// the same, name a valid variable and a host the proxy can target.
func FuzzParseSecret(f *testing.F) {
	for _, s := range []string{
		"TOKEN@api.example.com", "T_1@API.Example.com.:8443", "K@api.example.com,url",
		"K@api.example.com,url,file=/run/a,b", "K@[::1]:9443", "K@127.0.0.1:1",
		"@", "T@*.example.com", "T@a@b", "T@api.example.com,file=", "1@x.com",
		"K@api.example.com,any-header", "K@api.example.com,header=X-Token,header=Cookie,file=/k",
		"K@api.example.com,header=Authorization", "K@api.example.com,url,any-header,header=a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseSecret(spec)
		if err != nil {
			return
		}
		if checkSecretName(s.Name) != nil || s.Port < 1 || s.Port > 65535 || s.Host == "" {
			t.Fatalf("accepted %q as %+v", spec, s)
		}
		again, err := ParseSecret(s.String())
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("%q formats as %q, read back as %+v, %v", spec, s.String(), again, err)
		}
	})
}

// FuzzInnerRequest feeds arbitrary bytes to the reader of the request
// inside a terminated tunnel, then injects a secret: it must never panic,
// accept only a head that names the tunnel's host once, with one framing,
// and the head it sends on must not carry a line break the value or the
// client did not put in a header of its own.
func FuzzInnerRequest(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Bearer PH\r\n\r\n",
		"POST /a?k=PH HTTP/1.1\r\nHost: API.example.com:443\r\nContent-Length: 3\r\n\r\nabc",
		"POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: other.example.com\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: api.example.com\r\nHost: api.example.com\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: Basic eDpQSA==\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: api.example.com\r\nX: a\r\n b\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	s, err := NewSecrets([]Secret{{Name: "T", Host: "api.example.com", Port: 443, InURL: true, Value: "v@l ue/?&"}})
	if err != nil {
		f.Fatal(err)
	}
	ph := s.list[0].placeholder
	tgt, _ := parseTarget("api.example.com:443", 0)
	const max = 1024
	f.Fuzz(func(t *testing.T, data []byte) {
		in := strings.ReplaceAll(string(data), "PH", ph)
		lines, err := readHeadLines(bufio.NewReaderSize(strings.NewReader(in), 256), max)
		if err != nil {
			return
		}
		req, err := parseOriginHead(lines, tgt)
		if err != nil {
			return
		}
		hosts := 0
		for _, h := range req.headers {
			if strings.EqualFold(h.name, "Host") {
				hosts++
			}
		}
		if hosts != 1 || req.target != tgt || !strings.HasPrefix(req.path, "/") {
			t.Fatalf("accepted %q", in)
		}
		if _, err := s.inject(req, tgt); err != nil {
			t.Fatalf("inject %q: %v", in, err) // the fuzz value is shorter than its placeholder
		}
		head := string(req.renderHead(tlsPort))
		if len(head) > len(in)+maxInjectedGrowth+max/4 {
			t.Fatalf("head of %d bytes from %d", len(head), len(in))
		}
		if n := strings.Count(head, "\r\n"); n > len(req.headers)+3 || strings.Count(head, "\n") != n {
			t.Fatalf("head has extra line breaks: %q", head)
		}
		if strings.Contains(req.path, " ") {
			t.Fatalf("the target holds a space after injection: %q", req.path)
		}
	})
}

// FuzzRequestRules feeds arbitrary rules and requests to the request
// rule checks: they must never panic, a permitted request's path must
// start with a prefix of the rules and hold no dot segment or encoded
// character, and a rule must cover itself.
func FuzzRequestRules(f *testing.F) {
	f.Add("api.example.com GET,HEAD /repos/", "GET", "/repos/a?b")
	f.Add("api.example.com * /v1/ /v2/", "POST", "/v1/../x")
	f.Add("api.example.com POST", "POST", "/%2e%2e/")
	f.Fuzz(func(t *testing.T, pattern, method, path string) {
		p, err := ParsePattern(pattern)
		if err != nil || !p.rules.set() {
			return
		}
		if !p.Covers(p) {
			t.Fatalf("%q does not cover itself", pattern)
		}
		ok, _ := p.rules.permits(method, path)
		if !ok || p.rules.prefixes == nil {
			return
		}
		clean, _, _ := strings.Cut(path, "?")
		if unclearPath(clean) != "" {
			t.Fatalf("%q permits the unclear path %q", pattern, path)
		}
		hit := false
		for _, pre := range p.rules.prefixes {
			hit = hit || strings.HasPrefix(clean, pre)
		}
		if !hit {
			t.Fatalf("%q permits %q outside its prefixes", pattern, path)
		}
	})
}

// FuzzSOCKS5 feeds readSOCKS arbitrary greetings and requests: it must
// return a target that parseTarget accepts or an error, never panic, and
// write at most the two-byte greeting reply.
func FuzzSOCKS5(f *testing.F) {
	for _, s := range []string{
		"\x05\x01\x00\x05\x01\x00\x03\x0edb.example.com\x15\x38",
		"\x05\x02\x02\x00\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x16",
		"\x05\x01\x00\x05\x01\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x7f\x00\x00\x01\x00\x16",
		"\x05\x01\x00\x05\x02\x00\x01\x01\x02\x03\x04\x00\x16",
		"\x05\x01\x00\x05\x03\x00\x01\x01\x02\x03\x04\x00\x16",
		"\x05\x01\x00\x05\x01\x00\x03\x00\x00\x16",
		"\x05\x01\x02",
		"\x04\x01\x00\x16\x7f\x00\x00\x01\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var w bytes.Buffer
		tg, err := readSOCKS(bufio.NewReader(bytes.NewReader(b)), &w)
		if w.Len() > 2 {
			t.Fatalf("wrote %d bytes", w.Len())
		}
		if err != nil {
			return
		}
		if tg.port < 1 || tg.port > 65535 || (tg.host == "") == !tg.addr.IsValid() {
			t.Fatalf("bad target %+v", tg)
		}
		if _, err := parseTarget(tg.String(), 0); err != nil {
			t.Fatalf("target %v does not parse again: %v", tg, err)
		}
	})
}

// FuzzParseLocalPort: any string gives a port in range that formats back
// to the same string, or an error; never a panic.
func FuzzParseLocalPort(f *testing.F) {
	for _, s := range []string{"5432", "1", "65535", "65536", "0", "080", "+80", "-1", "", "8080 ", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		port, err := ParseLocalPort(s)
		if err != nil {
			return
		}
		if port < 1 || port > 65535 || strconv.Itoa(port) != s {
			t.Fatalf("%q parsed as %d", s, port)
		}
	})
}
