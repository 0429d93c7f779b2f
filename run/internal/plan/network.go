package plan

import (
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/native"
	"github.com/skill-sandbox/skill-sandbox/run/internal/workdir"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// ProxyPort is the proxy's port on the sandbox's own loopback. The network
// namespace is private to the run, so a fixed port cannot clash.
const ProxyPort = 3128

// planProxy checks the allowlist fields and returns nil when there is no
// allowlist.
func (s *Request) planProxy() (*netproxy.Config, error) {
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
	if !native.AllowlistSupported {
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
		Resolve: s.Resolve,
		Dial:    s.Dial,
		Denied:  s.NetworkLog,
		Secrets: s.Secrets,
		// A copy: the proxy must not see the caller change them.
		LocalPorts: slices.Clone(s.AllowLocal),
		OwnPort:    ProxyPort,
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
func (s *Request) checkLocalPorts() error {
	if len(s.AllowLocal) == 0 {
		return nil
	}
	if err := s.localServicesSupported("AllowLocal (--allow-local)", "network namespaces"); err != nil {
		return err
	}
	seen := map[int]bool{}
	for _, port := range s.AllowLocal {
		if err := netproxy.CheckLocalPort(port, ProxyPort); err != nil {
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
	for _, v := range append(append(ProxyVars(), caBundleVars()...), "NODE_USE_ENV_PROXY") {
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
func (s *Request) withCABundle() (*Request, string, func(), error) {
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
	dir, err := os.MkdirTemp(workdir.HostTemp(), "skill-sandbox-ca-")
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
