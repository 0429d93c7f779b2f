package serve

import (
	"net"
	"sync"
)

// DefaultMaxConns bounds the connections served at once.
const DefaultMaxConns = 1024

// Listener returns ln bounded to Config.MaxConns connections at once:
// past it, new connections wait in the kernel's backlog until one
// closes. Without it, clients that need no token (idle connections, each
// held up to Config.ReadHeaderTimeout) could take every file descriptor
// of the process, and the runs and the audit log would fail for want of
// one.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, s.cfg.MaxConns)}
}

// limitListener is a net.Listener with at most cap(slots) connections
// open.
type limitListener struct {
	net.Listener
	slots chan struct{}
}

// Accept waits for a free slot, then for a connection.
func (l *limitListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

// limitConn frees its slot when it is closed, once.
type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
