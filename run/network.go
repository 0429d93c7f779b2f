package run

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
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
	if err := s.checkLocalPorts(); err != nil {
		return nil, err
	}
	if len(s.AllowHosts) == 0 && len(s.AllowLocal) == 0 {
		if s.Secrets != nil {
			return nil, fmt.Errorf("%w: Secrets need AllowHosts naming their hosts (add --allow-host HOST)", ErrBadConfig)
		}
		if len(s.DenyHosts) > 0 && s.AllowNetwork {
			return nil, fmt.Errorf("%w: DenyHosts cannot be enforced with AllowNetwork (the script has the whole host network); use AllowHosts", ErrBadConfig)
		}
		// Without an allowlist nothing is reachable: deny entries have
		// nothing to take away.
		return nil, nil
	}
	if s.AllowNetwork {
		return nil, fmt.Errorf("%w: AllowHosts or AllowLocal and AllowNetwork exclude each other (AllowNetwork opens the whole host network)", ErrBadConfig)
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
	cfg := netproxy.Config{
		Policy:  pol,
		Resolve: s.resolve,
		Dial:    s.dial,
		Denied:  s.NetworkLog,
		Secrets: s.Secrets,
		// A copy: the proxy must not see the caller change them.
		LocalPorts: slices.Clone(s.AllowLocal),
		OwnPort:    proxyPort,
	}
	if s.Secrets != nil {
		// The proxy's own checks (a secret's host allowed), now
		// rather than when the init process is up.
		if _, err := netproxy.New(cfg); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadConfig, err)
		}
		for name := range s.Secrets.Env() {
			if _, ok := s.Env[name]; ok {
				return nil, fmt.Errorf("%w: %s is both a secret and an Env variable", ErrBadConfig, name)
			}
			if err := checkEnvKey(name); err != nil {
				return nil, err
			}
			if sandboxNetVar(name) {
				return nil, fmt.Errorf("%w: secret %s: the run sets that variable itself (proxy or CA bundle)", ErrBadConfig, name)
			}
		}
	}
	return &cfg, nil
}

// checkLocalPorts refuses local ports out of range, named twice, the
// proxy's own, or on a platform or backend that has no relay for them.
func (s *Sandbox) checkLocalPorts() error {
	if len(s.AllowLocal) == 0 {
		return nil
	}
	if err := s.localServicesSupported("AllowLocal (--allow-local)", "network namespaces"); err != nil {
		return err
	}
	seen := map[int]bool{}
	for _, port := range s.AllowLocal {
		if err := netproxy.CheckLocalPort(port, proxyPort); err != nil {
			return fmt.Errorf("%w: AllowLocal: %v", ErrBadConfig, err)
		}
		if seen[port] {
			return fmt.Errorf("%w: AllowLocal: port %d named twice", ErrBadConfig, port)
		}
		seen[port] = true
	}
	return nil
}

// sandboxNetVar reports whether name is a variable the run sets for its
// network (the proxy variables, NODE_USE_ENV_PROXY, the CA bundle's), in
// either case: a secret of that name would be overwritten, or would
// point the clients elsewhere.
func sandboxNetVar(name string) bool {
	for _, v := range append(append(proxyVars(), caBundleVars()...), "NODE_USE_ENV_PROXY") {
		if strings.EqualFold(v, name) {
			return true
		}
	}
	return false
}

// caBundleVars name the run's CA bundle to the clients that read one:
// OpenSSL and Go (SSL_CERT_FILE), curl, Python requests, git and node
// (which adds it to its own roots).
func caBundleVars() []string {
	return []string{"SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS"}
}

// systemBundles are where Linux distributions and macOS keep the
// system's PEM bundle (crypto/x509's list); SSL_CERT_FILE, when set,
// comes first.
func systemBundles() []string {
	return []string{
		os.Getenv("SSL_CERT_FILE"),
		"/etc/ssl/certs/ca-certificates.crt",
		"/etc/pki/tls/certs/ca-bundle.crt",
		"/etc/ssl/ca-bundle.pem",
		"/etc/pki/tls/cacert.pem",
		"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
		"/etc/ssl/cert.pem",
	}
}

// withCABundle writes, for a run with secrets, the CA bundle its clients
// trust: the host's system bundle and the secrets' CA certificate (never
// a key), in a folder of its own under the host's temp folder, and
// returns s with the file as a read grant, its path and its removal.
// Without secrets it returns s, "" and a no-op.
func (s *Sandbox) withCABundle() (*Sandbox, string, func(), error) {
	if s.Secrets == nil {
		return s, "", func() {}, nil
	}
	var system []byte
	for _, f := range systemBundles() {
		if b, err := os.ReadFile(f); f != "" && err == nil {
			system = b
			break
		}
	}
	dir, err := os.MkdirTemp(hostTemp(), "skill-sandbox-ca-")
	if err != nil {
		return nil, "", nil, fmt.Errorf("%w: CA bundle: %v", ErrStart, err)
	}
	remove := func() { os.RemoveAll(dir) }
	path := filepath.Join(dir, "ca-bundle.pem")
	if len(system) > 0 && system[len(system)-1] != '\n' {
		system = append(system, '\n')
	}
	err = os.Chmod(dir, 0o755)
	if err == nil {
		err = os.WriteFile(path, append(system, s.Secrets.CACertPEM()...), 0o644)
	}
	if err == nil {
		err = os.Chmod(path, 0o644) // whatever the umask: the run reads it as another user
	}
	if err != nil {
		remove()
		return nil, "", nil, fmt.Errorf("%w: CA bundle: %v", ErrStart, err)
	}
	c := *s
	c.ReadPaths = append(slices.Clone(s.ReadPaths), path)
	return &c, path, remove, nil
}

// withSecretEnv sets, for a run with secrets, each secret's variable to
// its placeholder and the CA bundle variables to bundle.
func withSecretEnv(env []string, secrets *netproxy.Secrets, bundle string) []string {
	if secrets == nil {
		return env
	}
	set := map[string]string{}
	for k, v := range secrets.Env() {
		set[k] = v
	}
	for _, k := range caBundleVars() {
		set[k] = bundle
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// withProxyEnv points the proxy variables of env (all present, blank, see
// buildEnv) at the proxy on 127.0.0.1:port: both cases of HTTP_PROXY and
// HTTPS_PROXY (http://), ALL_PROXY (socks5h://, the same port: the proxy
// serves SOCKS5 too, for the protocols that are not HTTP; clients read
// the scheme's own variable first), and an empty NO_PROXY so that nothing
// bypasses it (nothing else is reachable anyway), whatever the caller's
// Env or a policy set them to: a host exempted there would only fail.
// NODE_USE_ENV_PROXY makes node 24 and later honour them. Unless the
// caller set it, GIT_SSH_COMMAND sends git's ssh through the SOCKS
// proxy (see sshProxyCommand).
func withProxyEnv(env []string, port int) []string {
	hostPort := "127.0.0.1:" + strconv.Itoa(port)
	gitSSH := true
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY":
			kv = k + "=http://" + hostPort
		case "ALL_PROXY":
			kv = k + "=socks5h://" + hostPort
		case "NO_PROXY":
			kv = k + "="
		case "NODE_USE_ENV_PROXY":
			continue
		}
		if k == "GIT_SSH_COMMAND" {
			if v == "" {
				continue // replaced below: a duplicate would hide ours
			}
			gitSSH = false
		}
		out = append(out, kv)
	}
	if gitSSH {
		out = append(out, "GIT_SSH_COMMAND=ssh -o ProxyCommand='"+sshProxyCommand(hostPort)+"'")
	}
	return append(out, "NODE_USE_ENV_PROXY=1")
}

// sshProxyCommand is the ssh ProxyCommand that reaches %h:%p through the
// SOCKS5 proxy at hostPort, names resolved by the proxy: OpenBSD netcat,
// which Debian and Ubuntu install as nc.openbsd (package netcat-openbsd)
// and macOS as nc.
func sshProxyCommand(hostPort string) string {
	nc := "nc.openbsd"
	if runtime.GOOS == "darwin" {
		nc = "/usr/bin/nc"
	}
	return nc + " -X 5 -x " + hostPort + " %h %p"
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
func startAllowlist(l *launchState, sup *os.File, out *backend.Outcome) error {
	for _, m := range out.Missing {
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
