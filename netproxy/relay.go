package netproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// relay copies between the client (whose already buffered bytes are in br)
// and the server until both directions end, a write or read makes no
// progress for IdleTimeout while the other direction is idle too, or the
// proxy is closed. The server-to-client direction starts at once; the
// other first calls head, which returns what to send the server before
// the client's bytes (a request head, or the checked first TLS record of
// a tunnel) and what of the client's bytes follow it: nil for the rest of
// the stream (a tunnel), or a reader that ends with the one request's
// body (plain HTTP): the server gets that one request only, and a client
// that sends more (a pipelined request, or a request on a connection it
// reuses because the server ignored "Connection: close") has the
// connection closed, with whatever of the first request's answer has
// not reached it yet, which clients take as a cue to retry on a new one.
// An error from head ends the connection before anything more reaches
// the server, after a TLS alert to the client when head refused with one.
// Each direction uses one fixed buffer (and, for a bulk transfer on
// Linux, one pipe of at most bigPipe bytes), so a peer that never reads
// costs no more memory: its direction blocks until the idle timeout. It returns the
// bytes sent each way and head's error.
func (p *Proxy) relay(client net.Conn, br *bufio.Reader, server net.Conn, head func(last *atomic.Int64) ([]byte, io.Reader, error)) (up, down int64, err error) {
	var last atomic.Int64 // unix nanoseconds of the last progress either way
	last.Store(time.Now().UnixNano())
	idle := p.cfg.IdleTimeout
	var once sync.Once
	abort := func() {
		once.Do(func() {
			client.Close()
			server.Close()
		})
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		down, _ = p.pipe(server, server, client, &last, abort, true)
	}()
	first, body, err := head(&last)
	if err == nil && len(first) > 0 {
		server.SetWriteDeadline(time.Now().Add(idle))
		var w int
		w, err = server.Write(first)
		up = int64(w)
	}
	if err != nil {
		var r *tunnelRefusal
		if errors.As(err, &r) && r.alert != 0 {
			client.SetWriteDeadline(time.Now().Add(time.Second))
			client.Write(alertRecord(r.alert))
		}
		abort()
		wg.Wait()
		return up, down, err
	}
	if body == nil {
		// Once br holds nothing more, the client's connection itself is
		// read, which lets pipe splice it.
		var r io.Reader = br
		if br.Buffered() == 0 {
			r = client
		}
		n, _ := p.pipe(client, r, server, &last, abort, true)
		up += n
	} else {
		n, ended := p.pipe(client, body, server, &last, abort, false)
		up += n
		if ended {
			if _, closed := p.pipe(client, br, noMoreRequests{}, &last, abort, false); closed {
				if cw, ok := server.(interface{ CloseWrite() error }); ok {
					cw.CloseWrite()
				}
			}
		}
	}
	wg.Wait()
	return up, down, nil
}

// noMoreRequests is where the bytes a client sends after the one request
// of a plain HTTP connection go: nowhere; the write fails, so that pipe
// ends the connection.
type noMoreRequests struct{}

func (noMoreRequests) Write(p []byte) (int, error) {
	return 0, errors.New("a second request on a plain HTTP connection")
}

func (noMoreRequests) SetWriteDeadline(time.Time) error { return nil }

// pipe copies from r (src's bytes, through a buffer or a body's framing)
// to dst. At the end of r it returns true, after half-closing dst so the
// peer sees the end when halfClose is set (without it dst is left open:
// the end of a request body is not the end of the client's stream, and a
// server may take a half-close for the client giving up); on any other
// error or an idle timeout it aborts the whole connection.
func (p *Proxy) pipe(src net.Conn, r io.Reader, dst writeConn, last *atomic.Int64, abort func(), halfClose bool) (int64, bool) {
	idle := p.cfg.IdleTimeout
	bp, _ := p.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, relayBufSize)
		bp = &b
	}
	defer p.bufs.Put(bp)
	buf := *bp
	var n int64
	spliced := false
	for {
		src.SetReadDeadline(time.Now().Add(idle))
		k, err := r.Read(buf)
		if k > 0 {
			last.Store(time.Now().UnixNano())
			dst.SetWriteDeadline(time.Now().Add(idle))
			w, werr := dst.Write(buf[:k])
			n += int64(w)
			if werr != nil {
				abort()
				return n, false
			}
			last.Store(time.Now().UnixNano())
		}
		if err == nil {
			// A full buffer is a bulk transfer: the rest goes by splice
			// where it can (splice_linux.go). Small exchanges never get
			// there, so they do not pay for the pipe it needs.
			if k == len(buf) && !spliced {
				spliced = true
				if m, ended, ok := p.splice(src, r, dst, last, abort, halfClose); ok {
					return n + m, ended
				}
			}
			continue
		}
		if isTimeout(err) && time.Since(time.Unix(0, last.Load())) < idle {
			// The other direction is busy: this one may wait.
			continue
		}
		if errors.Is(err, io.EOF) {
			if !halfClose {
				return n, true
			}
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
				return n, true
			}
		}
		abort()
		return n, false
	}
}

// writeConn is what pipe writes to: a connection, or noMoreRequests.
type writeConn interface {
	io.Writer
	SetWriteDeadline(time.Time) error
}
