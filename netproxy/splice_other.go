//go:build !linux

package netproxy

import (
	"io"
	"net"
	"sync/atomic"
)

// splice is pipe's fast path on Linux (splice_linux.go); elsewhere there
// is none and pipe copies through its buffer.
func (p *Proxy) splice(src net.Conn, r io.Reader, dst writeConn, last *atomic.Int64, abort func(), halfClose bool) (n int64, ended, ok bool) {
	return 0, false, false
}
