package run

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// proxyPort is the proxy's port on the sandbox's own loopback. The network
// namespace is private to the run, so a fixed port cannot clash.
const proxyPort = 3128

// proxyRun is a launch's allowlist proxy, running once the init process
// has handed over its listening socket (see proxyRun.start).
type proxyRun struct {
	srv *netproxy.Proxy
	// hostLn is, on macOS, the proxy's listener on the host's loopback,
	// bound before the profile that names its port is generated.
	hostLn net.Listener
}

// planProxy checks the allowlist fields and returns nil when there is no
// allowlist.
func (s *Sandbox) planProxy() (*netproxy.Config, error) {
	if len(s.AllowHosts) == 0 {
		if len(s.DenyHosts) > 0 && s.AllowNetwork {
			return nil, fmt.Errorf("%w: DenyHosts cannot be enforced with AllowNetwork (the script has the whole host network); use AllowHosts", ErrBadConfig)
		}
		// Without an allowlist nothing is reachable: deny entries have
		// nothing to take away.
		return nil, nil
	}
	if s.AllowNetwork {
		return nil, fmt.Errorf("%w: AllowHosts and AllowNetwork exclude each other (AllowNetwork opens the whole host network)", ErrBadConfig)
	}
	if !hostAllowlistSupported {
		return nil, fmt.Errorf("%w: the host allowlist needs Linux network namespaces or the macOS Seatbelt profile; nothing on %s would hold the script to the proxy", ErrUnsupported, runtime.GOOS)
	}
	for _, l := range backend.AllowlistLayers() {
		if stageconfig.Has(s.Disable, l) {
			return nil, fmt.Errorf("%w: the host allowlist is enforced by the %s layer, which cannot be disabled with it", ErrBadConfig, l)
		}
	}
	pol, err := netproxy.NewPolicy(s.AllowHosts, s.DenyHosts)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadConfig, err)
	}
	return &netproxy.Config{
		Policy:  pol,
		Resolve: s.resolve,
		Dial:    s.dial,
		Denied:  s.NetworkLog,
	}, nil
}

// withProxyEnv points the proxy variables of env (all present, blank, see
// buildEnv) at the proxy on 127.0.0.1:port: both cases of HTTP_PROXY, HTTPS_PROXY and
// ALL_PROXY, and an empty NO_PROXY so that nothing bypasses it (nothing
// else is reachable anyway), whatever the caller's Env or a policy set
// them to: a host exempted there would only fail. NODE_USE_ENV_PROXY
// makes node 24 and later honour them.
func withProxyEnv(env []string, port int) []string {
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY":
			kv = k + "=" + url
		case "NO_PROXY":
			kv = k + "="
		case "NODE_USE_ENV_PROXY":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "NODE_USE_ENV_PROXY=1")
}

// stop ends the proxy (every open connection) and puts its log in res.
func (pr *proxyRun) stop(res *Result) {
	if pr.srv == nil && pr.hostLn != nil {
		pr.hostLn.Close() // refused before the proxy started
	}
	if pr.srv == nil {
		return
	}
	pr.srv.Close()
	rep := pr.srv.Report()
	res.Network = &rep
}

// startAllowlist refuses the run when the network namespace that enforces
// the allowlist is missing (never an open network instead), and otherwise
// starts the proxy on the socket the init process handed over.
func startAllowlist(l *launchState, sup *os.File, res *Result) error {
	for _, m := range res.Missing {
		if !stageconfig.Has(backend.AllowlistLayers(), m.Layer) {
			continue
		}
		if m.Layer == LayerSeatbelt {
			return fmt.Errorf("%w: the host allowlist needs the %s layer, which is missing (%s); "+
				"the run is refused rather than given an open network", ErrIsolation, m.Layer, m.Reason)
		}
		return fmt.Errorf("%w: the host allowlist needs the %s layer, which is missing (%s); "+
			"the run is refused rather than given an open network. Fix: allow unprivileged user namespaces "+
			"(sysctl user.max_user_namespaces=15000, kernel.unprivileged_userns_clone=1, or "+
			"kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu), or pass --allow-network to give the whole network knowingly",
			ErrIsolation, m.Layer, m.Reason)
	}
	if err := l.proxy.start(*l.plan.Proxy, sup); err != nil {
		return fmt.Errorf("%w: network proxy: %v", ErrStart, err)
	}
	return nil
}
