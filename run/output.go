package run

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
)

// capture is the sink of one output stream: it forwards every byte to the
// caller's writer, counts and hashes everything, and keeps the first limit
// bytes. A failing destination is dropped (the script keeps running and the
// stream keeps being counted) so a closed terminal cannot stall the sandbox.
type capture struct {
	dest  io.Writer
	limit int
	n     int64
	sum   hash.Hash
	buf   []byte
}

func newCapture(dest io.Writer, limit int) *capture {
	return &capture{dest: dest, limit: limit, sum: sha256.New()}
}

// Write implements io.Writer; it never fails.
func (c *capture) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	c.sum.Write(p)
	if room := c.limit - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	if c.dest != nil {
		if _, err := c.dest.Write(p); err != nil {
			c.dest = nil
		}
	}
	return len(p), nil
}

// output returns the stream's summary for Result.
func (c *capture) output() Output {
	return Output{
		Bytes:     c.n,
		SHA256:    hex.EncodeToString(c.sum.Sum(nil)),
		Captured:  c.buf,
		Truncated: c.n > int64(len(c.buf)),
	}
}
