package netproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Limits of a chunked request body's framing lines.
const (
	maxChunkLine    = 4 << 10 // a chunk-size line with its extensions
	maxChunkSizeHex = 15      // hex digits of a chunk size (below 2^60)
	maxLengthDigits = 18      // decimal digits of a Content-Length
)

// framing is how the body of a plain HTTP request ends (RFC 9112 6.3):
// after length bytes, or after the last chunk and the trailers.
type framing struct {
	chunked bool
	length  int64
}

// bodyFraming decides the framing of a plain HTTP request from its
// headers. Everything another parser could read differently is refused,
// so that the proxy and the server agree on where the one request it
// carries ends: Transfer-Encoding other than exactly "chunked", or with
// Content-Length, or in HTTP/1.0; Content-Length that is not plain digits
// or differs between copies; a Connection header naming either (which
// would drop it on the way to the server).
func (r *request) bodyFraming(version string) (framing, error) {
	var te, cl []string
	for _, h := range r.headers {
		switch strings.ToLower(h.name) {
		case "transfer-encoding":
			te = append(te, splitList(h.value)...)
		case "content-length":
			cl = append(cl, splitList(h.value)...)
		case "connection":
			for _, n := range splitList(h.value) {
				if n == "transfer-encoding" || n == "content-length" {
					return framing{}, fmt.Errorf("the Connection header names %s", n)
				}
			}
		}
	}
	switch {
	case len(te) > 0 && len(cl) > 0:
		return framing{}, errors.New("both Transfer-Encoding and Content-Length")
	case len(te) > 0 && version != "HTTP/1.1":
		return framing{}, errors.New("Transfer-Encoding in an HTTP/1.0 request")
	case len(te) > 0:
		if len(te) != 1 || te[0] != "chunked" {
			return framing{}, fmt.Errorf("unsupported Transfer-Encoding %q", truncateForError(strings.Join(te, ", ")))
		}
		return framing{chunked: true}, nil
	case len(cl) == 0:
		return framing{}, nil
	}
	var n int64
	for i, v := range cl {
		if v == "" || len(v) > maxLengthDigits || strings.Trim(v, "0123456789") != "" {
			return framing{}, fmt.Errorf("bad Content-Length %q", truncateForError(v))
		}
		if i > 0 && v != cl[0] {
			return framing{}, errors.New("differing Content-Length values")
		}
		n = 0
		for _, c := range []byte(v) {
			n = n*10 + int64(c-'0')
		}
	}
	return framing{length: n}, nil
}

// splitList splits a comma-separated header value into lower-case,
// trimmed elements, keeping empty ones (so "5," is not "5").
func splitList(v string) []string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.ToLower(strings.Trim(p, " \t"))
	}
	return parts
}

// body returns a reader of exactly the request body's bytes as the client
// sent them (chunked framing included), read from br. It returns io.EOF
// at the body's end, io.ErrUnexpectedEOF when the client closes before
// it, and an error on malformed chunked framing.
func (f framing) body(br *bufio.Reader, maxTrailer int) io.Reader {
	if f.chunked {
		return &chunkedBody{br: br, maxTrailer: maxTrailer}
	}
	return &lengthBody{br: br, left: f.length}
}

// lengthBody reads a body of a known length.
type lengthBody struct {
	br   *bufio.Reader
	left int64
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	return readFramed(b.br, &b.left, p)
}

// readFramed reads at most *left (> 0) bytes of a body whose length the
// framing gave, counting them off *left: the end of the stream before
// then is io.ErrUnexpectedEOF, a body cut short.
func readFramed(br *bufio.Reader, left *int64, p []byte) (int, error) {
	if int64(len(p)) > *left {
		p = p[:*left]
	}
	n, err := br.Read(p)
	*left -= int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// chunkedBody passes a chunked body through unchanged while checking its
// framing (RFC 9112 7.1): chunk-size lines of hex digits with optional
// extensions, each chunk's data followed by CRLF, the last chunk of size
// zero, then trailer lines up to an empty line.
type chunkedBody struct {
	br         *bufio.Reader
	maxTrailer int
	left       int64 // data bytes left in the current chunk
	inData     bool  // reading a chunk's data (then its CRLF)
	done       bool
	pending    []byte // framing bytes checked but not yet returned
	trailer    int    // trailer bytes so far
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		if b.done {
			return 0, io.EOF
		}
		if b.inData && b.left > 0 {
			return readFramed(b.br, &b.left, p)
		}
		if err := b.nextFraming(); err != nil {
			// A line cut by a timeout cannot be resumed: end the
			// connection rather than let the relay wait and read on.
			if isTimeout(err) {
				err = fmt.Errorf("chunked body: %v", err.Error())
			}
			return 0, err
		}
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

// nextFraming reads the framing that follows: a chunk's closing CRLF and
// the next chunk-size line, or the trailers after the last chunk.
func (b *chunkedBody) nextFraming() error {
	if b.inData {
		line, err := readChunkLine(b.br, 2)
		if err == errHeadTooLarge || err == nil && line != "" {
			return errors.New("chunk data not followed by CRLF")
		}
		if err != nil {
			return err
		}
		b.pending = append(b.pending, "\r\n"...)
		b.inData = false
	}
	line, err := readChunkLine(b.br, maxChunkLine)
	if err != nil {
		return err
	}
	size, ext, _ := strings.Cut(line, ";")
	if size == "" || len(size) > maxChunkSizeHex || strings.Trim(size, "0123456789abcdefABCDEF") != "" {
		return fmt.Errorf("bad chunk size %q", truncateForError(size))
	}
	for _, c := range []byte(ext) {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return errors.New("control character in a chunk extension")
		}
	}
	var n int64
	for _, c := range []byte(strings.ToLower(size)) {
		d := int64(c - '0')
		if c >= 'a' {
			d = int64(c-'a') + 10
		}
		n = n<<4 | d
	}
	b.pending = append(b.pending, line+"\r\n"...)
	if n > 0 {
		b.left, b.inData = n, true
		return nil
	}
	// The last chunk: trailer lines, then an empty line.
	for {
		line, err := readChunkLine(b.br, b.maxTrailer-b.trailer)
		if err != nil {
			return err
		}
		b.trailer += len(line) + 2
		b.pending = append(b.pending, line+"\r\n"...)
		if line == "" {
			b.done = true
			return nil
		}
		name, _, ok := strings.Cut(line, ":")
		if !ok || !isToken(name) {
			return errors.New("malformed trailer line")
		}
	}
}

// readChunkLine reads one CRLF-terminated framing line of at most max
// bytes (CRLF included), as readLine does for the head, mapping a close
// before it to io.ErrUnexpectedEOF.
func readChunkLine(br *bufio.Reader, max int) (string, error) {
	if max < 2 {
		return "", errors.New("chunked trailers too large")
	}
	line, err := readLine(br, max)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return line, err
}
