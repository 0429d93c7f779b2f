package netproxy

import (
	"bufio"
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"
)

// maxResponseHead bounds the response heads of a terminated tunnel that
// the proxy reads to take the secrets' values out of them, as received
// and as sent on (a short value's placeholder is longer than it: a head
// full of a one-byte value would grow 85 times).
const maxResponseHead = 64 << 10

// errResponseHead ends a terminated tunnel whose server sent a response
// head the proxy could not read within maxResponseHead: it cannot vouch
// that the head holds no value.
var errResponseHead = errors.New("response head too large or malformed")

// scrubConn is the server connection of a terminated tunnel as the relay
// reads it: the response heads (any 1xx ones, then the final one) come
// back with each value of the host's secrets replaced by its
// placeholder, in the forms the proxy sent it (as is, and escaped for a
// query or a path), so that a server reflecting a request header
// (Origin into Access-Control-Allow-Origin, an echoed X-Request-Id) or
// the target (a redirect that keeps it) does not hand the value to the
// script. The body passes unchanged.
type scrubConn struct {
	net.Conn
	br      *bufio.Reader
	swap    *strings.Replacer
	pending []byte // scrubbed head bytes not yet returned
	partial []byte // a head line read in part
	read    int    // head bytes read so far
	sent    int    // head bytes after scrubbing so far
	inHead  bool   // past a status line, before its empty line
	final   bool   // the head being read is the final one
	body    bool   // past the final head: bytes pass unchanged
}

// newScrubConn wraps c, the server connection of a terminated tunnel to t.
// extra holds more pairs (as sent on, as the client sent it) to swap
// back first: the request's own encoded forms of the values.
func (s *Secrets) newScrubConn(c net.Conn, t target, extra ...string) *scrubConn {
	return &scrubConn{Conn: c, br: bufio.NewReaderSize(c, 4<<10), swap: s.scrubber(t, extra...)}
}

// scrubber replaces each form of the values of the secrets for t by the
// secret's placeholder, after the pairs of extra.
func (s *Secrets) scrubber(t target, extra ...string) *strings.Replacer {
	pairs := slices.Clone(extra)
	for _, e := range s.list {
		if e.t != t {
			continue
		}
		for _, form := range []string{e.Value, url.QueryEscape(e.Value), url.PathEscape(e.Value)} {
			pairs = append(pairs, form, e.placeholder)
		}
	}
	return strings.NewReplacer(pairs...)
}

func (c *scrubConn) Read(p []byte) (int, error) {
	for len(c.pending) == 0 && !c.body {
		if err := c.nextLine(); err != nil {
			return 0, err
		}
	}
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.br.Read(p)
}

// CloseWrite half-closes the connection, as the relay does at the end of
// the client's stream.
func (c *scrubConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// nextLine reads one line of a response head into pending, scrubbed. A
// head starts with a status line; one of status 1xx (but 101, a switch
// of protocols) is followed by another head, and the empty line that
// ends the final one starts the body.
func (c *scrubConn) nextLine() error {
	for {
		frag, err := c.br.ReadSlice('\n')
		if c.read+len(c.partial)+len(frag) > maxResponseHead {
			return errResponseHead
		}
		// A line longer than the buffer, or cut by a timeout the relay
		// waits out, is kept whole until its end: no part of it is
		// returned unscrubbed.
		c.partial = append(c.partial, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	line := c.partial
	c.partial = nil
	c.read += len(line)
	status := !c.inHead
	switch {
	case !c.inHead:
		f := strings.Fields(string(line))
		if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
			return errResponseHead
		}
		c.inHead = true
		c.final = !strings.HasPrefix(f[1], "1") || f[1] == "101"
	case strings.TrimRight(string(line), "\r\n") == "":
		c.inHead = false
		c.body = c.final
	}
	out := string(line)
	if !status {
		out = c.scrub(line)
	}
	if c.sent += len(out); c.sent > 2*maxResponseHead {
		return errResponseHead
	}
	c.pending = append(c.pending, out...)
	return nil
}

// scrub returns a header line with the values taken out of its value
// (of the whole line when it has no proper name). Names and the framing
// headers pass unchanged (as the status line does): a short value ("1",
// "a") must not rewrite a Content-Length or a name.
func (c *scrubConn) scrub(line []byte) string {
	name, value, ok := strings.Cut(string(line), ":")
	switch {
	case !ok || !isToken(name):
		return c.swap.Replace(string(line))
	case strings.EqualFold(name, "Content-Length") || strings.EqualFold(name, "Transfer-Encoding"):
		return string(line)
	}
	return name + ":" + c.swap.Replace(value)
}

// basicSwaps returns the scrubber pairs of the Basic credentials inject
// rewrote (headers as sent on, sent as the client sent them): base64
// hides the value from the scrubbing of its plain forms, and a server
// that reflects Authorization into its response head would hand the
// script the encoded value.
func basicSwaps(sent, out []header) []string {
	var pairs []string
	for i := range out {
		if i >= len(sent) || out[i].value == sent[i].value || !strings.EqualFold(out[i].name, "Authorization") {
			continue
		}
		_, was, ok1 := strings.Cut(sent[i].value, " ")
		_, now, ok2 := strings.Cut(out[i].value, " ")
		now, was = strings.TrimSpace(now), strings.TrimSpace(was)
		if ok1 && ok2 && now != "" {
			// Padded first: a Replacer tries its pairs in order.
			pairs = append(pairs, now, was, strings.TrimRight(now, "="), strings.TrimRight(was, "="))
		}
	}
	return pairs
}
