package gvisor

import (
	"net"
	"sync"
)

// relayHub is the supervisor's end of the relay's control connection:
// for each byte the relay sends there (1 for the proxy's port, 2 and up
// for the local ports), it connects to the relay's socket and hands the
// connection to that port's listener, lns[byte-1].
type relayHub struct {
	path string
	up   chan struct{} // closed once ctl is set
	done chan struct{} // closed by Close
	lns  []*relayListener
	mu   sync.Mutex
	ctl  net.Conn
	once sync.Once
}

// newRelayHub is the hub of the relay's socket at path, with n listeners.
func newRelayHub(path string, n int) *relayHub {
	h := &relayHub{path: path, up: make(chan struct{}), done: make(chan struct{})}
	for range n {
		h.lns = append(h.lns, &relayListener{hub: h, conns: make(chan net.Conn)})
	}
	return h
}

// setControl keeps c, the control connection, and serves its requests,
// unless the hub is closed already.
func (h *relayHub) setControl(c net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.done:
		c.Close()
	default:
		h.ctl = c
		close(h.up)
		go h.dispatch(c)
	}
}

// dispatch serves the relay's requests on ctl until it ends or the hub
// closes. A byte naming no listener (the relay is in the script's reach:
// it may be disturbed, which only disturbs this run) ends the relaying.
func (h *relayHub) dispatch(ctl net.Conn) {
	var b [1]byte
	for {
		if _, err := ctl.Read(b[:]); err != nil {
			return
		}
		if b[0] == 0 || int(b[0]) > len(h.lns) {
			h.Close()
			return
		}
		c, err := net.Dial("unix", h.path)
		if err != nil {
			return
		}
		select {
		case h.lns[b[0]-1].conns <- c:
		case <-h.done:
			c.Close()
			return
		}
	}
}

// Close ends the control connection and every listener's Accept.
func (h *relayHub) Close() error {
	h.once.Do(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		close(h.done)
		if h.ctl != nil {
			h.ctl.Close()
		}
	})
	return nil
}

// relayListener is the listener of one port of the relay: each
// connection is one the relay asked for on that port.
type relayListener struct {
	hub   *relayHub
	conns chan net.Conn
}

// Accept waits for the relay's request and returns the connection made
// for it.
func (l *relayListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.hub.done:
		return nil, net.ErrClosed
	}
}

// Close ends the relaying of every port: the proxy closes its listeners
// when the run ends.
func (l *relayListener) Close() error { return l.hub.Close() }

// Addr is the relay's socket.
func (l *relayListener) Addr() net.Addr { return &net.UnixAddr{Name: l.hub.path, Net: "unix"} }
