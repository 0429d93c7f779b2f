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
// a tunnel); an error from head ends the connection before anything more
// reaches the server, after a TLS alert to the client when head refused
// with one. Each direction uses one fixed buffer, so a peer that never
// reads costs no memory: its direction blocks until the idle timeout. It
// returns the bytes sent each way and head's error.
func (p *Proxy) relay(client net.Conn, br *bufio.Reader, server net.Conn, head func(last *atomic.Int64) ([]byte, error)) (up, down int64, err error) {
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
		down = p.pipe(server, nil, client, &last, abort)
	}()
	first, err := head(&last)
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
	up += p.pipe(client, br, server, &last, abort)
	wg.Wait()
	return up, down, nil
}

// pipe copies from src (through br when set) to dst. At EOF it half-closes
// dst so the peer sees the end, and returns; on any other error or an
// idle timeout it aborts the whole connection.
func (p *Proxy) pipe(src net.Conn, br *bufio.Reader, dst net.Conn, last *atomic.Int64, abort func()) int64 {
	idle := p.cfg.IdleTimeout
	buf := make([]byte, relayBufSize)
	var n int64
	for {
		src.SetReadDeadline(time.Now().Add(idle))
		var k int
		var err error
		if br != nil && br.Buffered() > 0 {
			k, err = br.Read(buf)
		} else {
			k, err = src.Read(buf)
		}
		if k > 0 {
			last.Store(time.Now().UnixNano())
			dst.SetWriteDeadline(time.Now().Add(idle))
			w, werr := dst.Write(buf[:k])
			n += int64(w)
			if werr != nil {
				abort()
				return n
			}
			last.Store(time.Now().UnixNano())
		}
		if err == nil {
			continue
		}
		if isTimeout(err) && time.Since(time.Unix(0, last.Load())) < idle {
			// The other direction is busy: this one may wait.
			continue
		}
		if errors.Is(err, io.EOF) {
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite()
				return n
			}
		}
		abort()
		return n
	}
}
