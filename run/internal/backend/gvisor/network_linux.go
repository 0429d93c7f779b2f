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

// readyPoll is how often the supervisor looks for the relay's socket
// until it can connect to it.
const readyPoll = 5 * time.Millisecond

// ServeFunc starts the filtering proxy on proxy, the host end of the
// sandbox's proxy port, and the relays of the local ports on local (one
// for each of the run's Config.LocalPorts, in order), and returns at
// once; the proxy owns the listeners and closes them when stopped.
type ServeFunc func(proxy net.Listener, local []net.Listener) error

// network is the host side of one run's network under runsc.
type network struct {
	flags []string // runsc's network flags
	relay string   // host path of the relay's program; "" without the proxy
	dir   string   // host folder of the relay's socket, bound into the sandbox
	hub   *relayHub
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
	n.hub = newRelayHub(filepath.Join(n.dir, relaySocket), 1+len(p.Config.LocalPorts))
	var local []net.Listener
	for _, l := range n.hub.lns[1:] {
		local = append(local, l)
	}
	if err := serve(n.hub.lns[0], local); err != nil {
		return nil, fmt.Errorf("network proxy: %v", err)
	}
	return n, nil
}

// connect connects to the relay's socket once it is there, until stop
// is closed; the connection is the relay's control connection.
func (n *network) connect(stop <-chan struct{}) {
	if n.hub == nil {
		return
	}
	t := time.NewTicker(readyPoll)
	defer t.Stop()
	for {
		if c, err := net.Dial("unix", n.hub.path); err == nil {
			n.seal()
			n.hub.setControl(c)
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
	if n.hub == nil {
		return true
	}
	select {
	case <-n.hub.up:
		return true
	default:
		return false
	}
}

// close ends the relay's connections; the proxy closes its listener too.
func (n *network) close() {
	if n.hub != nil {
		n.hub.Close()
	}
}
