package gvisor

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// readyWait bounds how long, after the run, the supervisor waits for a
// relay's ready connection already queued but not yet accepted.
const readyWait = time.Second

// ServeFunc starts the filtering proxy on ln, the host end of the
// sandbox's proxy port, and returns at once; the proxy owns ln and
// closes it when stopped.
type ServeFunc func(ln net.Listener) error

// network is the host side of one run's network under runsc.
type network struct {
	flags []string // runsc's network flags
	relay string   // host path of the relay's program; "" without the proxy
	dir   string   // host folder of the sockets, bound into the sandbox
	ready net.Listener
	isUp  chan struct{} // closed when the relay said it listens
}

// setupNetwork prepares the network of p's run in dir: none (gVisor's
// own stack, a loopback and nothing else); the host's (AllowNetwork), as
// the native backend gives it; or, with the proxy, none plus the relay,
// its sockets served by serve.
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
	n := &network{flags: []string{"--network", "none", "--host-uds", "open"}, relay: exe, dir: filepath.Join(dir, "net"), isUp: make(chan struct{})}
	if err := os.Mkdir(n.dir, 0o755); err != nil {
		return nil, err
	}
	proxy, err := listenUnix(filepath.Join(n.dir, proxySocket))
	if err != nil {
		return nil, err
	}
	if err := serve(proxy); err != nil {
		proxy.Close()
		return nil, fmt.Errorf("network proxy: %v", err)
	}
	if n.ready, err = listenUnix(filepath.Join(n.dir, readySocket)); err != nil {
		return nil, err
	}
	go func() {
		if c, err := n.ready.Accept(); err == nil {
			c.Close()
			close(n.isUp)
		}
	}()
	return n, nil
}

// listenUnix listens on a Unix socket at path that the script's identity
// may connect to (the folder holding it is the supervisor's).
func listenUnix(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err == nil {
		err = os.Chmod(path, 0o777)
	}
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return nil, fmt.Errorf("proxy socket: %v", err)
	}
	return ln, nil
}

// relayStarted reports, once the run is over, whether the relay started
// (always true without one).
func (n *network) relayStarted() bool {
	if n.ready == nil {
		return true
	}
	select {
	case <-n.isUp:
		return true
	case <-time.After(readyWait):
		return false
	}
}

// close stops listening for the relay; the proxy's listener is the
// proxy's to close.
func (n *network) close() {
	if n.ready != nil {
		n.ready.Close()
	}
}
