package run

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeInternet is what the allowlist tests reach: a plain HTTP and an
// HTTPS server on the host's 127.0.0.1, known to the proxy under test
// names through the sandbox's test hooks. Names resolve to TEST-NET-3
// addresses (checked by the proxy like any answer), and only dialling
// those reaches the servers; names that resolve to loopback or the
// metadata address must be refused by the proxy's own checks.
type fakeInternet struct {
	httpAddr, httpsAddr string
	caPEM               []byte
}

const fakePublicIP = "203.0.113.10"

func (fi *fakeInternet) names() map[string][]string {
	return map[string][]string{
		"api.example.com":  {fakePublicIP},
		"example.com":      {fakePublicIP},
		"badexample.com":   {fakePublicIP},
		"www.example.com":  {fakePublicIP},
		"loop.example.com": {"127.0.0.1"},
		"meta.example.com": {"169.254.169.254"},
	}
}

// hook installs the test resolver and dialer on sb.
func (fi *fakeInternet) hook(sb *Sandbox) {
	names := fi.names()
	sb.resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, s := range names[host] {
			out = append(out, netip.MustParseAddr(s))
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("no such host %s", host)
		}
		return out, nil
	}
	sb.dial = func(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
		to := map[string]string{
			fakePublicIP + ":80":  fi.httpAddr,
			fakePublicIP + ":443": fi.httpsAddr,
			"127.0.0.1:80":        fi.httpAddr, // only an explicit IP grant gets here
		}[ap.String()]
		if to == "" {
			return nil, fmt.Errorf("test network: no route to %s", ap)
		}
		var d net.Dialer
		return d.DialContext(ctx, "tcp", to)
	}
}

// newFakeInternet starts the servers with a certificate made here for the
// test names, and a handler that answers "hello HOST PATH", redirects on
// /redirect?to=URL and serves extra's handlers under their patterns (git
// repositories under /git/, a package index under /simple/).
func newFakeInternet(t *testing.T, extra map[string]http.Handler) *fakeInternet {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "skill-sandbox test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"example.com", "*.example.com", "badexample.com"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s %s\n", r.Host, r.URL.Path)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	for pattern, h := range extra {
		mux.Handle(pattern, h)
	}
	plainLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tlsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Clients that give up mid-handshake (refused tunnels) are expected.
	quiet := log.New(io.Discard, "", 0)
	srv := &http.Server{Handler: mux, ErrorLog: quiet}
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	go srv.Serve(plainLn)
	tlsSrv := &http.Server{Handler: mux, TLSConfig: srv.TLSConfig, ErrorLog: quiet}
	go tlsSrv.Serve(tls.NewListener(tlsLn, srv.TLSConfig))
	t.Cleanup(func() { srv.Close(); tlsSrv.Close() })
	return &fakeInternet{
		httpAddr:  plainLn.Addr().String(),
		httpsAddr: tlsLn.Addr().String(),
		caPEM:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	}
}

// netSkill writes a skill with the scripts and the test CA at
// references/ca.pem.
func netSkill(t *testing.T, fi *fakeInternet, scripts map[string]string) string {
	t.Helper()
	dir := newSkill(t, scripts)
	if err := os.MkdirAll(filepath.Join(dir, "references"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "references", "ca.pem"), fi.caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// needAllowlist skips when this machine cannot create the namespaces the
// allowlist needs.
func needAllowlist(t *testing.T) {
	t.Helper()
	fullIsolation(t)
}

const curlScript = `#!/bin/sh
# usage: fetch.sh URL [curl options]
url=$1; shift
curl -sS --max-time 10 --cacert ../references/ca.pem "$@" "$url"
echo "curl exit $?"
`

const urllibScript = `import sys, ssl, urllib.request, urllib.error
ctx = ssl.create_default_context(cafile="../references/ca.pem")
try:
    with urllib.request.urlopen(sys.argv[1], context=ctx, timeout=10) as r:
        print("status", r.status, r.read().decode().strip())
except urllib.error.HTTPError as e:
    print("http error", e.code, e.read().decode().strip())
except Exception as e:
    print("error", type(e).__name__, e)
`

func TestAllowHostsRealClients(t *testing.T) {
	needAllowlist(t)
	needTool(t, "curl")
	fi := newFakeInternet(t, nil)
	dir := netSkill(t, fi, map[string]string{"fetch.sh": curlScript, "fetch.py": urllibScript})
	var warnings strings.Builder
	sb := Sandbox{
		AllowHosts: []string{"api.example.com", "*.example.com", "127.0.0.1:80"},
		DenyHosts:  []string{"www.example.com"},
		NetworkLog: &warnings,
	}
	fi.hook(&sb)
	tests := []struct {
		script, url string
		want        string
	}{
		{"fetch.sh", "https://api.example.com/a", "hello api.example.com /a"},
		{"fetch.sh", "http://api.example.com/b", "hello api.example.com /b"},
		{"fetch.py", "https://api.example.com/c", "status 200 hello api.example.com /c"},
		{"fetch.py", "http://api.example.com/d", "status 200 hello api.example.com /d"},
		{"fetch.sh", "http://127.0.0.1/e", "hello 127.0.0.1 /e"}, // explicit IP grant
		// Refusals: the proxy answers 403 (curl shows it for CONNECT as
		// exit 56, for plain HTTP the body with the reason).
		{"fetch.sh", "https://example.com/", "403"},     // *.example.com: subdomains only
		{"fetch.sh", "https://badexample.com/", "403"},  // not a subdomain
		{"fetch.sh", "https://www.example.com/", "403"}, // deny wins
		{"fetch.sh", "https://api.example.com:8443/", "403"},
		{"fetch.sh", "https://" + fakePublicIP + "/", "403"},
		{"fetch.sh", "http://loop.example.com/", "resolves only to refused addresses: 127.0.0.1 (loopback)"},
		{"fetch.sh", "http://meta.example.com/latest/meta-data/", "169.254.169.254 (link-local (cloud metadata))"},
		{"fetch.py", "https://meta.example.com/", "403"},
		{"fetch.py", "http://badexample.com/", "http error 403 skill-sandbox: network: badexample.com:80 is not in the allow list"},
		{"fetch.py", "http://api.example.com/redirect?to=http://badexample.com/x", "http error 403"},
	}
	for _, tt := range tests {
		o := runIn(t, sb, dir, tt.script, tt.url)
		if o.err != nil {
			t.Fatalf("%s %s: %v", tt.script, tt.url, o.err)
		}
		got := o.stdout + o.stderr
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s %s: got %q, want %q", tt.script, tt.url, got, tt.want)
		}
		if o.res.Network == nil {
			t.Fatalf("%s %s: no network report", tt.script, tt.url)
		}
	}
	// A redirect to a denied host followed by curl.
	o := runIn(t, sb, dir, "fetch.sh", "https://api.example.com/redirect?to=https://badexample.com/", "-L")
	if !strings.Contains(o.stdout+o.stderr, "403") {
		t.Errorf("curl -L to a denied host: %q", o.stdout+o.stderr)
	}
	rep := o.res.Network
	if rep.Total != 2 || rep.Allowed != 1 || rep.Denied != 1 || len(rep.Connections) != 2 {
		t.Fatalf("report of the redirect run: %+v", rep)
	}
	first, second := rep.Connections[0], rep.Connections[1]
	if !first.Allowed || first.Host != "api.example.com" || first.Port != 443 || first.Addr != fakePublicIP+":443" ||
		first.Rule != "allow api.example.com" || first.BytesUp == 0 || first.BytesDown == 0 || first.Method != "CONNECT" {
		t.Errorf("allowed connection: %+v", first)
	}
	if second.Allowed || second.Host != "badexample.com" || second.Reason == "" || second.Addr != "" {
		t.Errorf("denied connection: %+v", second)
	}
	if !strings.Contains(warnings.String(), "skill-sandbox: network: denied CONNECT badexample.com:443") {
		t.Errorf("no denial line on the caller's stderr: %q", warnings.String())
	}
}

func TestAllowHostsGit(t *testing.T) {
	needAllowlist(t)
	needTool(t, "git")
	backend := "/usr/lib/git-core/git-http-backend"
	if _, err := os.Stat(backend); err != nil {
		t.Skip("git-http-backend not installed")
	}
	root := t.TempDir()
	repo := filepath.Join(root, "repo.git")
	for _, args := range [][]string{
		{"init", "-q", "--bare", repo},
		{"-C", repo, "config", "http.receivepack", "false"},
	} {
		if out, err := execCommand("git", args...); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	work := filepath.Join(root, "w")
	script := fmt.Sprintf("set -e; git init -q %s; cd %s; echo hi > f; git add f; git -c user.name=t -c user.email=t@t commit -qm one; git push -q %s HEAD:refs/heads/main", work, work, repo)
	if out, err := execCommand("sh", "-c", script); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	fi := newFakeInternet(t, map[string]http.Handler{"/git/": gitHandler(backend, root)})
	dir := netSkill(t, fi, map[string]string{"clone.sh": `#!/bin/sh
cd "$HOME"
export GIT_SSL_CAINFO="$OLDPWD/../references/ca.pem"
# /etc/gitconfig is the host's: unreadable where its mode or the run's
# layers say so, which git treats as fatal.
export GIT_CONFIG_NOSYSTEM=1
git clone -q -b main "$1" out && cat out/f && echo cloned
git ls-remote https://badexample.com/git/repo.git 2>&1 || echo "denied as expected"
`})
	sb := Sandbox{AllowHosts: []string{"api.example.com"}}
	fi.hook(&sb)
	for _, url := range []string{"https://api.example.com/git/repo.git", "http://api.example.com/git/repo.git"} {
		o := runIn(t, sb, dir, "clone.sh", url)
		if o.err != nil || !strings.Contains(o.stdout, "hi\ncloned") || !strings.Contains(o.stdout, "denied as expected") ||
			!strings.Contains(o.stdout, "403") {
			t.Errorf("git clone %s: err %v\nstdout %s\nstderr %s", url, o.err, o.stdout, o.stderr)
		}
	}
}

// TestAllowlistBypass tries every way around the proxy from inside the
// sandbox. They fail because the run has its own network namespace: the
// attempts are made once more with Landlock's TCP rules disabled, so the
// namespace alone has to stop them.
func TestAllowlistBypass(t *testing.T) {
	needAllowlist(t)
	fi := newFakeInternet(t, nil)
	hostIP := outboundIP(t)
	_, port, _ := net.SplitHostPort(fi.httpAddr)
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"bypass.py": bypassScript})
	for _, disable := range [][]Layer{nil, {LayerLandlockNet}} {
		sb := Sandbox{AllowHosts: []string{"api.example.com", "*.example.com"}, Disable: disable}
		fi.hook(&sb)
		o := runIn(t, sb, dir, "bypass.py", port, hostIP)
		if o.err != nil {
			t.Fatalf("disable %v: %v %s", disable, o.err, o.stderr)
		}
		t.Logf("disable %v:\n%s", disable, o.stdout)
		if strings.Contains(o.stdout, "REACHED") || strings.Count(o.stdout, "blocked") != 10 {
			t.Errorf("disable %v: a bypass worked:\n%s%s", disable, o.stdout, o.stderr)
		}
	}
	// Control: the same script with the host network reaches the host.
	o := runIn(t, Sandbox{AllowNetwork: true}, dir, "bypass.py", port, hostIP)
	if !strings.Contains(o.stdout, "tcp-host-loopback REACHED") {
		t.Errorf("control run with the host network did not reach the host:\n%s%s", o.stdout, o.stderr)
	}
}

// outboundIP is a non-loopback address of this host.
func outboundIP(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
				return n.IP.String()
			}
		}
	}
	return "192.0.2.1"
}

func TestAllowHostsConfig(t *testing.T) {
	dir := newSkill(t, map[string]string{"ok.sh": "#!/bin/sh\necho ok\n"})
	for _, sb := range []Sandbox{
		{AllowHosts: []string{"*"}},
		{AllowHosts: []string{"bücher.example"}},
		{AllowHosts: []string{"example.com"}, DenyHosts: []string{"*.com"}},
		{AllowHosts: []string{"example.com"}, AllowNetwork: true},
		{DenyHosts: []string{"example.com"}, AllowNetwork: true},
		{AllowHosts: []string{"example.com"}, Disable: []Layer{LayerNetNS}},
		{AllowHosts: []string{"example.com"}, Disable: []Layer{LayerUserNS}},
	} {
		o := runIn(t, sb, dir, "ok.sh")
		if !errors.Is(o.err, ErrBadConfig) || o.res.Started {
			t.Errorf("%+v: err %v started %v, want ErrBadConfig", sb, o.err, o.res.Started)
		}
	}
}

// TestAllowHostsWithoutUserNamespaces: where user namespaces are refused
// the allowlist cannot be enforced, and the run is refused instead of
// falling back to the host network.
func TestAllowHostsWithoutUserNamespaces(t *testing.T) {
	if os.Getenv(noUserNSEnv) == "1" {
		dir := newSkill(t, map[string]string{"ok.sh": "#!/bin/sh\necho ran\n"})
		o := runIn(t, Sandbox{AllowHosts: []string{"example.com"}, AllowDegraded: true}, dir, "ok.sh")
		if !errors.Is(o.err, ErrIsolation) || o.res.Started || strings.Contains(o.stdout, "ran") ||
			!strings.Contains(o.err.Error(), "user namespaces") {
			t.Fatalf("err %v started %v stdout %q", o.err, o.res.Started, o.stdout)
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("mapping a uid range for the nested test needs root")
	}
	out, err := rerunSuite("^TestAllowHostsWithoutUserNamespaces$", []string{noUserNSEnv + "=1"}, &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}},
		GidMappingsEnableSetgroups: true,
	})
	if err != nil || !strings.Contains(out, "PASS") {
		t.Fatalf("nested run: %v\n%s", err, out)
	}
}

// execCommand runs a host command for test set-up.
func execCommand(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// gitHandler serves the repositories under root at /git/ with git's own
// smart HTTP server.
func gitHandler(backend, root string) http.Handler {
	return &cgi.Handler{Path: backend, Root: "/git", Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
}

// TestAllowHostsTimeoutEndsTunnels: a script that holds a tunnel open and
// stalls is ended by the run's timeout, and the proxy's connections with
// it.
func TestAllowHostsTimeoutEndsTunnels(t *testing.T) {
	needAllowlist(t)
	fi := newFakeInternet(t, nil)
	dir := newSkill(t, map[string]string{"hold.py": `import socket, time
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"CONNECT api.example.com:443 HTTP/1.1\r\n\r\n")
print(s.recv(100).decode().split("\r\n")[0], flush=True)
time.sleep(60)
`})
	sb := Sandbox{AllowHosts: []string{"api.example.com"}, Timeout: 2 * time.Second}
	fi.hook(&sb)
	start := time.Now()
	o := runIn(t, sb, dir, "hold.py")
	if o.err != nil || !o.res.TimedOut || !strings.Contains(o.stdout, "200 Connection established") {
		t.Fatalf("err %v timed out %v stdout %q stderr %q", o.err, o.res.TimedOut, o.stdout, o.stderr)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run took %v with a 2s timeout", d)
	}
	if r := o.res.Network; r == nil || r.Total != 1 || !r.Connections[0].Allowed {
		t.Errorf("report: %+v", r)
	}
}

// TestAllowHostsWithGrants: the proxy's descriptor is handed to the init
// process after the granted trees', and both work in one run.
func TestAllowHostsWithGrants(t *testing.T) {
	needAllowlist(t)
	needTool(t, "curl")
	fi := newFakeInternet(t, nil)
	data := t.TempDir()
	os.Chmod(data, 0o755)
	if err := os.WriteFile(filepath.Join(data, "in.txt"), []byte("granted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := netSkill(t, fi, map[string]string{"both.sh": "#!/bin/sh\ncat \"$1\"\ncurl -sS --cacert ../references/ca.pem https://api.example.com/g\n"})
	sb := Sandbox{AllowHosts: []string{"api.example.com"}, ReadPaths: []string{data}}
	fi.hook(&sb)
	o := runIn(t, sb, dir, "both.sh", filepath.Join(data, "in.txt"))
	if o.err != nil || o.stdout != "granted\nhello api.example.com /g\n" {
		t.Errorf("err %v stdout %q stderr %q", o.err, o.stdout, o.stderr)
	}
}
