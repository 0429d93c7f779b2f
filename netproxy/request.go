package netproxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxHeaders bounds the header lines of one request head.
const maxHeaders = 100

// request is a parsed proxy request head.
type request struct {
	method  string
	target  target
	path    string   // origin-form path and query for plain HTTP; "" for CONNECT
	headers []header // in order, as received
	framing framing  // where a plain HTTP request's body ends
}

type header struct{ name, value string }

// errHeadTooLarge is returned when the head exceeds the size limit.
var errHeadTooLarge = errors.New("request head too large")

// readHead reads one request head of at most max bytes from br. It accepts
// the strict subset a proxy needs (see docs/network.md):
//
//   - a request line "METHOD SP target SP HTTP/1.x" ending in CRLF;
//   - CONNECT with an authority-form target "host:port";
//   - any other method with an absolute-form "http://host[:port]/path"
//     target (https:// is refused: clients use CONNECT for it);
//   - header lines "Name: value" of token names and values without control
//     characters other than tab; no obsolete line folding;
//   - at most maxHeaders headers.
func readHead(br *bufio.Reader, max int) (*request, error) {
	lines, err := readHeadLines(br, max)
	if err != nil {
		return nil, err
	}
	return parseHead(lines)
}

// readHeadLines reads the lines of one request head of at most max bytes
// (CRLF line ends only, at most maxHeaders header lines), without the
// empty line that ends it.
func readHeadLines(br *bufio.Reader, max int) ([]string, error) {
	var lines []string
	total := 0
	for {
		line, err := readLine(br, max-total)
		if err != nil {
			return nil, err
		}
		total += len(line) + 2
		if line == "" {
			if len(lines) == 0 {
				return nil, errors.New("empty request line")
			}
			break
		}
		lines = append(lines, line)
		if len(lines) > maxHeaders+1 {
			return nil, fmt.Errorf("more than %d header lines", maxHeaders)
		}
	}
	return lines, nil
}

// readLine reads one CRLF-terminated line of at most max bytes (CRLF
// included) and returns it without the CRLF. A bare CR or LF is an error.
func readLine(br *bufio.Reader, max int) (string, error) {
	var buf []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(buf)+len(frag) > max {
			return "", errHeadTooLarge
		}
		buf = append(buf, frag...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return "", err
		}
		break
	}
	if len(buf) < 2 || buf[len(buf)-2] != '\r' {
		return "", errors.New("line not terminated by CRLF")
	}
	buf = buf[:len(buf)-2]
	if bytes.IndexByte(buf, '\r') >= 0 || bytes.IndexByte(buf, '\n') >= 0 {
		return "", errors.New("bare CR or LF in request head")
	}
	return string(buf), nil
}

// parseHead parses the request line and headers.
func parseHead(lines []string) (*request, error) {
	f := strings.Split(lines[0], " ")
	if len(f) != 3 {
		return nil, errors.New("malformed request line")
	}
	method, uri, version := f[0], f[1], f[2]
	if !isToken(method) {
		return nil, errors.New("malformed method")
	}
	if version != "HTTP/1.1" && version != "HTTP/1.0" {
		return nil, fmt.Errorf("unsupported protocol %q", truncateForError(version))
	}
	req := &request{method: method}
	var err error
	if req.headers, err = parseHeaders(lines[1:]); err != nil {
		return nil, err
	}
	if method == "CONNECT" {
		req.target, err = parseTarget(uri, 0)
		if err != nil {
			return nil, fmt.Errorf("CONNECT target: %v", err)
		}
		return req, nil
	}
	req.target, req.path, err = parseAbsoluteURI(uri)
	if err != nil {
		return nil, err
	}
	if req.framing, err = req.bodyFraming(version); err != nil {
		return nil, err
	}
	return req, nil
}

// parseHeaders parses header lines "Name: value" of token names and
// values without control characters other than tab. A line starting with
// a space or tab (obsolete folding) has no token name and is refused.
func parseHeaders(lines []string) ([]header, error) {
	var hs []header
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		if !ok || !isToken(name) {
			return nil, errors.New("malformed header line")
		}
		value = strings.Trim(value, " \t")
		for _, c := range []byte(value) {
			if (c < 0x20 && c != '\t') || c == 0x7f {
				return nil, errors.New("control character in header value")
			}
		}
		hs = append(hs, header{name, value})
	}
	return hs, nil
}

// parseAbsoluteURI splits "http://authority/path?query" into the target
// and the origin-form "/path?query" sent upstream.
func parseAbsoluteURI(uri string) (target, string, error) {
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		if strings.HasPrefix(uri, "/") {
			return target{}, "", errors.New("not a proxy request: the target must be an absolute http:// URI")
		}
		return target{}, "", errors.New("malformed request target")
	}
	switch strings.ToLower(scheme) {
	case "http":
	case "https":
		return target{}, "", errors.New("https:// target: use CONNECT for HTTPS")
	default:
		return target{}, "", fmt.Errorf("unsupported scheme %q", truncateForError(scheme))
	}
	end := strings.IndexAny(rest, "/?#")
	authority, path := rest, "/"
	if end >= 0 {
		authority, path = rest[:end], rest[end:]
	}
	if strings.ContainsRune(authority, '@') {
		return target{}, "", errors.New("user information in the URI is refused")
	}
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path = path[:i]
	}
	if strings.HasPrefix(path, "?") {
		path = "/" + path
	}
	if path == "" {
		path = "/"
	}
	for _, c := range []byte(path) {
		if c <= 0x20 || c >= 0x7f {
			return target{}, "", errors.New("invalid character in the URI path")
		}
	}
	t, err := parseTarget(authority, 80)
	if err != nil {
		return target{}, "", fmt.Errorf("URI host: %v", err)
	}
	return t, path, nil
}

// isHopByHop reports whether a lower-case header name is one a proxy must
// not forward (RFC 9110 7.6.1), or the proxy's own, or Host (rewritten).
func isHopByHop(name string) bool {
	switch name {
	case "connection", "proxy-connection", "keep-alive", "proxy-authorization",
		"proxy-authenticate", "te", "trailer", "upgrade", "host":
		return true
	}
	return false
}

// dropped returns the lower-case names of the headers the proxy does not
// send on: the hop-by-hop ones, Host (rewritten) and those the
// Connection header names.
func (r *request) dropped() map[string]bool {
	drop := map[string]bool{}
	for _, h := range r.headers {
		n := strings.ToLower(h.name)
		drop[n] = drop[n] || isHopByHop(n)
		if n == "connection" {
			for _, c := range strings.Split(h.value, ",") {
				drop[strings.ToLower(strings.TrimSpace(c))] = true
			}
		}
	}
	return drop
}

// upstreamHead renders the request for the origin server: origin-form
// target, Host from the URI, hop-by-hop headers (and those Connection
// names) removed, and "Connection: close" so that one client connection
// carries requests to one checked host only.
func (r *request) upstreamHead() []byte { return r.renderHead(80) }

// renderHead is upstreamHead for a server whose default port is defPort
// (80 for http, 443 for https), which the Host header leaves out.
func (r *request) renderHead(defPort int) []byte {
	drop := r.dropped()
	var b bytes.Buffer
	b.WriteString(r.method + " " + r.path + " HTTP/1.1\r\n")
	host := r.target.hostname()
	if r.target.addr.Is6() {
		host = "[" + host + "]"
	}
	if r.target.port != defPort {
		host += ":" + strconv.Itoa(r.target.port)
	}
	b.WriteString("Host: " + host + "\r\n")
	for _, h := range r.headers {
		if drop[strings.ToLower(h.name)] {
			continue
		}
		b.WriteString(h.name + ": " + h.value + "\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	return b.Bytes()
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= 0x20 || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// truncateForError keeps error messages short.
func truncateForError(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}
