package native

import (
	"fmt"
	"net"
	"os"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// proxyRun is a launch's allowlist proxy, running once the init process
// has handed over its listening socket (see proxyRun.start).
type proxyRun struct {
	srv *netproxy.Proxy
	// hostLn is, on macOS, the proxy's listener on the host's loopback,
	// bound before the profile that names its port is generated.
	hostLn net.Listener
}

// stop ends the proxy (every open connection) and puts its log in out.
func (pr *proxyRun) stop(out *backend.Outcome) {
	if pr.srv == nil && pr.hostLn != nil {
		pr.hostLn.Close() // refused before the proxy started
	}
	if pr.srv == nil {
		return
	}
	pr.srv.Close()
	rep := pr.srv.Report()
	out.Network = &rep
}

// startAllowlist refuses the run when the network namespace that enforces
// the allowlist is missing (never an open network instead), and otherwise
// starts the proxy on the socket the init process handed over.
func startAllowlist(l *Launch, sup *os.File, out *backend.Outcome) error {
	for _, m := range out.Missing {
		if !stageconfig.Has(backend.AllowlistLayers(), m.Layer) {
			continue
		}
		if m.Layer == stageconfig.LayerSeatbelt {
			return fmt.Errorf("%w: the host allowlist needs the %s layer, which is missing (%s); "+
				"the run is refused rather than given an open network", backend.ErrIsolation, m.Layer, m.Reason)
		}
		return fmt.Errorf("%w: the host allowlist needs the %s layer, which is missing (%s); "+
			"the run is refused rather than given an open network. Fix: allow unprivileged user namespaces "+
			"(sysctl user.max_user_namespaces=15000, kernel.unprivileged_userns_clone=1, or "+
			"kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu), or pass --allow-network to give the whole network knowingly",
			backend.ErrIsolation, m.Layer, m.Reason)
	}
	if err := l.proxy.start(*l.plan.Proxy, sup); err != nil {
		return fmt.Errorf("%w: network proxy: %v", backend.ErrStart, err)
	}
	return nil
}
