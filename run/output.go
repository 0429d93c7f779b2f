package run

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
)

// capture is the sink of one output stream: it forwards every byte to the
// caller's writer, up to maxStream bytes when that is set, counts and
// hashes everything, and keeps the first limit bytes. A failing
// destination is dropped (the script keeps running and the stream keeps
// being counted) so a closed terminal cannot stall the sandbox.
type capture struct {
	dest  io.Writer
	limit int
	n     int64
	sum   hash.Hash
	buf   []byte

	// maxStream, when positive, is how many bytes are forwarded to dest
	// at most (Sandbox.MaxOutput). The first write past it sets exceeded
	// and calls onExceed, which ends the run.
	maxStream int64
	exceeded  bool
	onExceed  func()
}

func newCapture(dest io.Writer, limit int) *capture {
	return &capture{dest: dest, limit: limit, sum: sha256.New()}
}

// Write implements io.Writer; it never fails.
func (c *capture) Write(p []byte) (int, error) {
	before := c.n
	c.n += int64(len(p))
	c.sum.Write(p)
	if room := c.limit - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	fwd := p
	if c.maxStream > 0 && c.n > c.maxStream {
		fwd = p[:max(c.maxStream-before, 0)]
		if !c.exceeded {
			c.exceeded = true
			if c.onExceed != nil {
				c.onExceed()
			}
		}
	}
	if c.dest != nil && len(fwd) > 0 {
		if _, err := c.dest.Write(fwd); err != nil {
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
