package netproxy

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// spliceChunk is the most one splice(2) call moves from a socket into the
// direction's pipe: the pipe's default capacity (16 pages). The pipe is
// grown to bigPipe where the kernel allows it (fs.pipe-max-size, and
// fs.pipe-user-pages-soft, past which a user's pipes get one page).
const (
	spliceChunk = 64 << 10
	bigPipe     = 256 << 10
)

// splice is pipe's fast path on Linux: when both ends are TCP connections
// and r is src itself (nothing buffered in the proxy), the bytes go from
// one socket to the other through a pipe of the kernel's with splice(2),
// never through the proxy's memory: a download ran at 36 % of the
// loopback's speed copied through a 16 KiB buffer (BenchmarkDownload).
// It keeps pipe's rules: every read and write has the idle deadline; a
// read that times out while the other direction made progress within
// IdleTimeout waits on; any other failure aborts the connection; the end
// of src half-closes dst (halfClose) or is returned. ok is false when the
// fast path does not apply and nothing was read.
//
// The pipe is the direction's own and is drained into dst before the
// next read, so it holds at most spliceChunk bytes: a peer that never
// reads blocks its direction, as with a buffer, until the idle timeout.
// Go's own splice (io.Copy between TCP connections) is not used: on a
// write deadline it drops what is in its pipe and cannot say which side
// timed out, and each direction needs that to wait on a busy peer.
func (p *Proxy) splice(src net.Conn, r io.Reader, dst writeConn, last *atomic.Int64, abort func(), halfClose bool) (n int64, ended, ok bool) {
	st, sok := src.(*net.TCPConn)
	dt, dok := dst.(*net.TCPConn)
	if !sok || !dok || r != io.Reader(src) {
		return 0, false, false
	}
	srcRaw, err := st.SyscallConn()
	if err != nil {
		return 0, false, false
	}
	dstRaw, err := dt.SyscallConn()
	if err != nil {
		return 0, false, false
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		return 0, false, false
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	chunk := spliceChunk
	if c, err := unix.FcntlInt(uintptr(fds[0]), unix.F_SETPIPE_SZ, bigPipe); err == nil && c > chunk {
		chunk = c
	}
	idle := p.cfg.IdleTimeout
	for {
		src.SetReadDeadline(time.Now().Add(idle))
		k, err := spliceOnce(srcRaw.Read, func(fd int) (int, error) {
			k, err := unix.Splice(fd, nil, fds[1], nil, chunk, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
			return int(k), err
		})
		if k > 0 {
			last.Store(time.Now().UnixNano())
			dst.SetWriteDeadline(time.Now().Add(idle))
			for left := k; left > 0; {
				w, werr := spliceOnce(dstRaw.Write, func(fd int) (int, error) {
					w, err := unix.Splice(fds[0], nil, fd, nil, left, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
					return int(w), err
				})
				left -= w
				n += int64(w)
				if werr != nil || w == 0 {
					abort()
					return n, false, true
				}
				last.Store(time.Now().UnixNano())
			}
			continue
		}
		if err == nil { // k == 0: the end of src
			if !halfClose {
				return n, true, true
			}
			dt.CloseWrite()
			return n, true, true
		}
		if isTimeout(err) && time.Since(time.Unix(0, last.Load())) < idle {
			continue // the other direction is busy: this one may wait
		}
		abort()
		return n, false, true
	}
}

// spliceOnce runs call on the descriptor of a connection (through its
// RawConn's Read or Write, wait, which waits for the descriptor to be
// ready and honours the connection's deadline) until it moves something,
// meets the end, or fails otherwise than with EAGAIN.
func spliceOnce(wait func(func(uintptr) bool) error, call func(fd int) (int, error)) (int, error) {
	var k int
	var cerr error
	err := wait(func(fd uintptr) bool {
		for {
			k, cerr = call(int(fd))
			if !errors.Is(cerr, unix.EINTR) {
				return !errors.Is(cerr, unix.EAGAIN)
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return k, nil
}
