package sign

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
)

// maxString bounds one SSH wire string; nothing in a signature or a key
// this package accepts comes near it (an RSA-16384 modulus is 2 KiB).
const maxString = 16 << 10

// errShort is a wire string or integer running past the end of its buffer.
var errShort = errors.New("truncated")

// reader decodes the SSH wire format of RFC 4251 section 5 from a byte
// slice, remembering the first error so that callers check once.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// bytes returns the next n raw bytes.
func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.fail(errShort)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) uint32() uint32 {
	v := r.bytes(4)
	if v == nil {
		return 0
	}
	return binary.BigEndian.Uint32(v)
}

// string reads a uint32 length and that many bytes.
func (r *reader) string() []byte {
	n := r.uint32()
	if r.err != nil {
		return nil
	}
	if n > maxString {
		r.fail(fmt.Errorf("string of %d bytes exceeds %d", n, maxString))
		return nil
	}
	return r.bytes(int(n))
}

// mpint reads a non-negative multiple-precision integer in its minimal
// two's complement encoding (RFC 4251); negative values and superfluous
// leading zero bytes are refused.
func (r *reader) mpint() *big.Int {
	v := r.string()
	if r.err != nil {
		return nil
	}
	switch {
	case len(v) > 0 && v[0]&0x80 != 0:
		r.fail(errors.New("negative mpint"))
		return nil
	case len(v) > 1 && v[0] == 0 && v[1]&0x80 == 0:
		r.fail(errors.New("mpint with a superfluous leading zero"))
		return nil
	}
	return new(big.Int).SetBytes(v)
}

// end fails unless the whole buffer was read.
func (r *reader) end() {
	if r.err == nil && len(r.b) != 0 {
		r.fail(fmt.Errorf("%d trailing bytes", len(r.b)))
	}
}

// appendString appends s as an SSH wire string.
func appendString(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}
