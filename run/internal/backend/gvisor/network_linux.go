package gvisor

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// readyPoll is how often the supervisor looks for the relay's socket
// until it can connect to it.
const readyPoll = 5 * time.Millisecond

// ServeFunc starts the filtering proxy on ln, the host end of the
// sandbox's proxy port, and returns at once; the proxy owns ln and
// closes it when stopped.
type ServeFunc func(ln net.Listener) error

// network is the host side of one run's network under runsc.
type network struct {
	flags []string // runsc's network flags
	relay string   // host path of the relay's program; "" without the proxy
	dir   string   // host folder of the relay's socket, bound into the sandbox
	ln    *relayListener
}

// setupNetwork prepares the network of p's run in dir: none (gVisor's
// own stack, a loopback and nothing else); the host's (AllowNetwork), as
// the native backend gives it; or, with the proxy, none plus the relay,
// whose connections serve hands the proxy.
//
// The relay listens on a Unix socket it creates in a host folder
// (runsc --host-uds create) and the supervisor connects to it: the
// sandbox never connects to a host socket, which runsc's gofer would do
// with its own identity (root for a root caller), so a script could not
// reach a host daemon's socket in its grants as root.
func setupNetwork(p *backend.Spec, dir string, serve ServeFunc) (*network, error) {
	switch {
	case p.Config.AllowNetwork:
		return &network{flags: []string{"--network", "host"}}, nil
	case p.Proxy == nil:
		return &network{flags: []string{"--network", "none"}}, nil
	case serve == nil:
		return nil, errors.New("the run has a host allowlist but nothing serves its proxy")
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return nil, fmt.Errorf("finding this program for the network relay: %v", err)
	}
	n := &network{flags: []string{"--network", "none", "--host-uds", "create"}, relay: exe, dir: filepath.Join(dir, "net")}
	if err := os.Mkdir(n.dir, 0o700); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		// The relay runs as the run's identity and makes its socket here.
		if err := os.Chown(n.dir, p.UID, p.GID); err != nil {
			return nil, err
		}
	}
	n.ln = &relayListener{path: filepath.Join(n.dir, relaySocket), up: make(chan struct{}), done: make(chan struct{})}
	if err := serve(n.ln); err != nil {
		return nil, fmt.Errorf("network proxy: %v", err)
	}
	return n, nil
}

// connect connects to the relay's socket once it is there, until stop
// is closed; the connection is the relay's control connection.
func (n *network) connect(stop <-chan struct{}) {
	if n.ln == nil {
		return
	}
	t := time.NewTicker(readyPoll)
	defer t.Stop()
	for {
		if c, err := net.Dial("unix", n.ln.path); err == nil {
			n.seal()
			n.ln.setControl(c)
			return
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// seal takes the socket folder back once the relay's socket is made:
// the script must not fill the host's disk through it. A root caller's
// gets it back as root's (0755); a rootless run's folder stays the
// caller's, which is the script's identity there, so it is only made
// read-only (0500), which the script could undo (docs/backends.md).
func (n *network) seal() {
	if os.Geteuid() == 0 {
		os.Chown(n.dir, 0, 0)
		os.Chmod(n.dir, 0o755)
		return
	}
	os.Chmod(n.dir, 0o500)
}

// relayStarted reports, once the run is over, whether the relay took
// its control connection (always true without a relay).
func (n *network) relayStarted() bool {
	if n.ln == nil {
		return true
	}
	select {
	case <-n.ln.up:
		return true
	default:
		return false
	}
}

// close ends the relay's connections; the proxy closes its listener too.
func (n *network) close() {
	if n.ln != nil {
		n.ln.Close()
	}
}

// relayListener is the proxy's listener: each connection is one the
// relay asked for with a byte on the control connection, made by
// connecting to the relay's socket.
type relayListener struct {
	path string
	up   chan struct{} // closed once ctl is set
	done chan struct{} // closed by Close
	mu   sync.Mutex
	ctl  net.Conn
	once sync.Once
}

// setControl keeps c, the control connection, unless the listener is
// closed already.
func (l *relayListener) setControl(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.done:
		c.Close()
	default:
		l.ctl = c
		close(l.up)
	}
}

// Accept waits for the relay's request and returns the connection made
// for it.
func (l *relayListener) Accept() (net.Conn, error) {
	select {
	case <-l.up:
	case <-l.done:
		return nil, net.ErrClosed
	}
	var b [1]byte
	if _, err := l.ctl.Read(b[:]); err != nil {
		return nil, net.ErrClosed
	}
	c, err := net.Dial("unix", l.path)
	if err != nil {
		return nil, net.ErrClosed
	}
	return c, nil
}

// Close ends the control connection and any Accept.
func (l *relayListener) Close() error {
	l.once.Do(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		close(l.done)
		if l.ctl != nil {
			l.ctl.Close()
		}
	})
	return nil
}

// Addr is the relay's socket.
func (l *relayListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }
