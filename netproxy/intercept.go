package netproxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// interception is the outcome of a terminated tunnel for the record.
type interception struct {
	up, down int64
	secrets  []string // names of the secrets injected
	status   int      // HTTP status of a refusal the proxy sent; 0 when none
	reason   string   // why the tunnel or its request was refused or failed
	remedy   string   // what would allow it
	rule     string   // the allow entry whose request rules permitted the request; "" for the tunnel's
}

// intercept serves a CONNECT tunnel to t, a secret's host, whose server
// connection up is dialled and whose allow entries decided d (their
// request rules apply to the request): it checks the client's ClientHello as any
// tunnel's, terminates TLS with a certificate of the run's authority,
// verifies the real server against the trust store, and carries one
// request, read strictly, with the secrets' placeholders replaced, then
// the server's answer unchanged. Anything else the client sends after the
// request ends the connection (as for plain HTTP): one request per
// connection, each checked.
func (p *Proxy) intercept(c net.Conn, br *bufio.Reader, up net.Conn, t target, d Decision) interception {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	rec, err := p.firstRecord(c, br, t, &last)
	var refused *tunnelRefusal
	switch {
	case errors.As(err, &refused):
		if refused.alert != 0 {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			c.Write(alertRecord(refused.alert))
		}
		return interception{reason: refused.reason, remedy: refused.remedy}
	case err != nil:
		return interception{reason: "the client closed the tunnel before its TLS handshake"}
	case rec == nil:
		return interception{reason: fmt.Sprintf("the tunnel to %s does not start with TLS: a secret's host is reached over TLS only (the value is never sent in clear)", t),
			remedy: "nothing in the policy: speak TLS (https://) to a secret's host"}
	}
	cc := &prefixConn{Conn: c, r: io.MultiReader(bytes.NewReader(rec), br)}
	leaf, err := p.cfg.Secrets.ca.leaf(t)
	if err != nil {
		return interception{reason: "making the certificate of " + t.hostname() + ": " + err.Error()}
	}
	tc := tls.Server(cc, &tls.Config{
		Certificates: []tls.Certificate{*leaf},
		NextProtos:   []string{"http/1.1"},
		MinVersion:   tls.VersionTLS12,
	})
	tc.SetDeadline(time.Now().Add(p.cfg.HeaderTimeout))
	if err := tc.Handshake(); err != nil {
		return interception{reason: "TLS handshake with the client failed: " + err.Error(),
			remedy: "make the client trust the run's CA: the bundle in $SSL_CERT_FILE (also in CURL_CA_BUNDLE, REQUESTS_CA_BUNDLE, GIT_SSL_CAINFO, NODE_EXTRA_CA_CERTS; docs/secrets.md)"}
	}
	uc := tls.Client(up, &tls.Config{
		ServerName: t.hostname(),
		RootCAs:    p.roots,
		NextProtos: []string{"http/1.1"},
		MinVersion: tls.VersionTLS12,
	})
	uc.SetDeadline(time.Now().Add(p.cfg.DialTimeout))
	if err := uc.Handshake(); err != nil {
		// The answer follows the client's request head: one sent ahead
		// of it is a response the client never asked for, and may lose.
		p.readInner(bufio.NewReaderSize(tc, 4<<10), t)
		return p.refuseInside(tc, 502, "Bad Gateway", fmt.Sprintf("the server %s failed TLS verification against the host's trust store: %v", t, err),
			"nothing in the policy: the server's certificate must verify against the trust store of the host running skill-sandbox (SSL_CERT_FILE there names another)")
	}
	uc.SetDeadline(time.Time{})
	tbr := bufio.NewReaderSize(tc, 4<<10)
	req, status, why := p.readInner(tbr, t)
	if status != 0 {
		if status < 0 { // closed without a request
			return interception{reason: why}
		}
		return p.refuseInside(tc, status, statusText(status), why, badRequestFix)
	}
	tc.SetDeadline(time.Time{})
	ok, rule, why, fix := d.permits(t, req.method, req.path)
	if !ok {
		return p.refuseInside(tc, 403, "Forbidden", why, fix)
	}
	sent := slices.Clone(req.headers)
	used, err := p.cfg.Secrets.inject(req, t)
	if err != nil {
		return p.refuseInside(tc, 431, statusText(431), "bad request inside the TLS tunnel to "+t.String()+": "+err.Error(),
			"nothing in the policy: send each secret's placeholder once or twice in a request")
	}
	first := req.renderHead(tlsPort)
	body := req.framing.body(tbr, p.cfg.MaxHeaderBytes)
	upN, downN, _ := p.relay(tc, tbr, p.cfg.Secrets.newScrubConn(uc, t, basicSwaps(sent, req.headers)...), func(*atomic.Int64) ([]byte, io.Reader, error) { return first, body, nil })
	return interception{up: upN, down: downN, secrets: used, rule: rule}
}

// readInner reads the one request of a terminated tunnel to t, strictly:
// the plain HTTP proxy's rules (CRLF only, no obsolete folding, token
// names, no control characters, unambiguous body framing, size and time
// bounds), an origin-form target, and exactly one Host header naming t,
// the host the tunnel, its server name and its certificate are for. It
// returns the request, or a status (-1: the client closed without one)
// and the reason.
func (p *Proxy) readInner(br *bufio.Reader, t target) (*request, int, string) {
	lines, err := readHeadLines(br, p.cfg.MaxHeaderBytes)
	if err != nil {
		if errors.Is(err, io.EOF) && !errors.Is(err, errHeadTooLarge) {
			return nil, -1, "the client closed the terminated tunnel without a request"
		}
		status, _, reason := headRefusal(err)
		return nil, status, reason
	}
	req, err := parseOriginHead(lines, t)
	if err != nil {
		return nil, 400, "bad request inside the TLS tunnel to " + t.String() + ": " + err.Error()
	}
	return req, 0, ""
}

// parseOriginHead parses the head of a request sent inside a terminated
// tunnel to t: "METHOD /path HTTP/1.x", headers, and one Host that names t.
func parseOriginHead(lines []string, t target) (*request, error) {
	f := strings.Split(lines[0], " ")
	if len(f) != 3 {
		return nil, errors.New("malformed request line")
	}
	method, path, version := f[0], f[1], f[2]
	if !isToken(method) || method == "CONNECT" {
		return nil, errors.New("malformed method")
	}
	if version != "HTTP/1.1" && version != "HTTP/1.0" {
		return nil, fmt.Errorf("unsupported protocol %q", truncateForError(version))
	}
	if !strings.HasPrefix(path, "/") {
		return nil, errors.New("the target must be an origin-form /path")
	}
	for _, c := range []byte(path) {
		if c <= 0x20 || c >= 0x7f || c == '#' {
			return nil, errors.New("invalid character in the request target")
		}
	}
	req := &request{method: method, target: t, path: path}
	var err error
	if req.headers, err = parseHeaders(lines[1:]); err != nil {
		return nil, err
	}
	var hosts []string
	for _, h := range req.headers {
		if strings.EqualFold(h.name, "Host") {
			hosts = append(hosts, h.value)
		}
	}
	if len(hosts) != 1 {
		return nil, fmt.Errorf("want exactly one Host header, got %d", len(hosts))
	}
	ht, err := parseTarget(hosts[0], tlsPort)
	if err != nil || ht != t {
		return nil, fmt.Errorf("the Host header %q does not name %s, the host of the tunnel", truncateForError(hosts[0]), t)
	}
	if req.framing, err = req.bodyFraming(version); err != nil {
		return nil, err
	}
	return req, nil
}

// refuseInside answers the client of a terminated tunnel with an HTTP
// error, as refuse does outside.
func (p *Proxy) refuseInside(tc *tls.Conn, status int, text, reason, remedy string) interception {
	tc.SetWriteDeadline(time.Now().Add(time.Second))
	tc.Write(httpError(status, text, reason, remedy))
	tc.Close()
	return interception{status: status, reason: reason, remedy: remedy}
}

// statusText is the reason phrase of the statuses the proxy sends.
func statusText(status int) string {
	switch status {
	case 400:
		return "Bad Request"
	case 403:
		return "Forbidden"
	case 408:
		return "Request Timeout"
	case 431:
		return "Request Header Fields Too Large"
	case 502:
		return "Bad Gateway"
	case 503:
		return "Service Unavailable"
	}
	return "Error"
}

// httpError is the whole response of a refusal: status, a text body
// giving the reason and the remedy, and the end of the connection.
func httpError(status int, text, reason, remedy string) []byte {
	body := "skill-sandbox: network: " + reason + "\n"
	if remedy != "" {
		body += "skill-sandbox: network: to allow it: " + remedy + "\n"
	}
	return []byte(fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, text, len(body), body))
}

// prefixConn is a client connection whose first bytes were already read
// (the checked ClientHello, and what the proxy's reader buffered): they
// are read again before the connection's own.
type prefixConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixConn) Read(b []byte) (int, error) { return c.r.Read(b) }
