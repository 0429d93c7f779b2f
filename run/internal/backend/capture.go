package backend

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
)

// Capture is the sink of one output stream: it forwards every byte to the
// caller's writer, up to maxStream bytes when that is set, counts and
// hashes everything, and keeps the first limit bytes. A failing
// destination is dropped (the script keeps running and the stream keeps
// being counted) so a closed terminal cannot stall the sandbox.
type Capture struct {
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

// NewCaptures returns the captures of o's two streams. A stream past
// o.MaxStream calls w.OutputExceeded, which ends the run.
func NewCaptures(o Output, w *Watchdog) (stdout, stderr *Capture) {
	stdout = &Capture{dest: o.Stdout, limit: o.CapBytes, sum: sha256.New(), maxStream: o.MaxStream, onExceed: w.OutputExceeded}
	stderr = &Capture{dest: o.Stderr, limit: o.CapBytes, sum: sha256.New(), maxStream: o.MaxStream, onExceed: w.OutputExceeded}
	return stdout, stderr
}

// CollectOutput sets the streams' summaries in out, and which one passed
// MaxOutput.
func CollectOutput(stdout, stderr *Capture, out *Outcome) {
	out.Stdout, out.Stderr = stdout.stream(), stderr.stream()
	switch {
	case stdout.exceeded:
		out.OutputExceeded = "stdout"
	case stderr.exceeded:
		out.OutputExceeded = "stderr"
	}
}

// Write implements io.Writer; it never fails.
func (c *Capture) Write(p []byte) (int, error) {
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

// stream returns the stream's summary.
func (c *Capture) stream() Stream {
	return Stream{
		Bytes:     c.n,
		SHA256:    hex.EncodeToString(c.sum.Sum(nil)),
		Captured:  c.buf,
		Truncated: c.n > int64(len(c.buf)),
	}
}
