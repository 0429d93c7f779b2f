// Package verdaccio is for tests: it runs Verdaccio, a real npm
// registry, on loopback with no uplink, and publishes packages to it.
//
// For most uses: Start a registry, Publish packages, and make a Skill
// whose lock file npm writes against the registry. Verdaccio is found
// as $SKILL_SANDBOX_VERDACCIO, on PATH or where .ci/run installs it (the
// user's cache folder); without it the test is skipped, and fails under
// CI=true.
package verdaccio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Registry is a Verdaccio npm registry on loopback with no uplink:
// it serves only what the test publishes.
type Registry struct {
	// URL is its address, "http://127.0.0.1:PORT/".
	URL    string
	dir    string
	npmrc  string // the publisher's npm configuration, with its token
	npmEnv []string
}

// find returns the verdaccio program: $SKILL_SANDBOX_VERDACCIO (set by
// .ci/run), on PATH, or where .ci/run installs it. The test skips
// without it, and fails under CI=true.
func find(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SKILL_SANDBOX_VERDACCIO"); p != "" {
		return p
	}
	if p, err := exec.LookPath("verdaccio"); err == nil {
		return p
	}
	// Tests may point XDG_CACHE_HOME elsewhere: look in both.
	dirs := []string{os.Getenv("XDG_CACHE_HOME")}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, ".cache"))
	}
	for _, d := range dirs {
		found, _ := filepath.Glob(filepath.Join(d, "skill-sandbox-ci", "verdaccio-*", "node_modules", ".bin", "verdaccio"))
		if d != "" && len(found) > 0 {
			return found[len(found)-1]
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("verdaccio not found (.ci/run installs it from npm)")
	}
	t.Skip("verdaccio not found: install it with npm (see .ci/run) to test Node environments against a local registry")
	return ""
}

// Start starts Verdaccio on a free loopback port and adds a
// user to publish with.
func Start(t *testing.T) *Registry {
	t.Helper()
	prog := find(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm not found")
	}
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	conf := fmt.Sprintf(`storage: %[1]s/storage
auth:
  htpasswd:
    file: %[1]s/htpasswd
    max_users: 10
uplinks: {}
packages:
  '**':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
log: { type: stdout, format: pretty, level: warn }
`, dir)
	confFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var logBuf lockedBuffer
	cmd := exec.Command(prog, "--config", confFile, "--listen", addr)
	cmd.Stdout, cmd.Stderr = &logBuf, &logBuf
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	r := &Registry{URL: "http://" + addr + "/", dir: dir}
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("verdaccio exited:\n%s", logBuf.String())
		default:
		}
		resp, err := http.Get(r.URL + "-/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("verdaccio did not answer on %s: %v\n%s", addr, err, logBuf.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	body, _ := json.Marshal(map[string]string{"name": "tester", "password": "tester-password"})
	req, _ := http.NewRequest(http.MethodPut, r.URL+"-/user/org.couchdb.user:tester", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.Token == "" {
		t.Fatalf("verdaccio adduser: %s %v", resp.Status, err)
	}
	r.npmrc = filepath.Join(dir, "npmrc")
	rc := fmt.Sprintf("registry=%s\n//%s/:_authToken=%s\n", r.URL, addr, tok.Token)
	if err := os.WriteFile(r.npmrc, []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	r.npmEnv = append(os.Environ(), "HOME="+dir, "npm_config_userconfig="+r.npmrc, "npm_config_cache="+filepath.Join(dir, "npm-cache"),
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	return r
}

// NPM runs npm in dir with the publisher's configuration.
func (r *Registry) NPM(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("npm", args...)
	cmd.Dir, cmd.Env = dir, r.npmEnv
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// Publish publishes a package of name and version made of files
// (package.json made here, with scripts when postinstall is set).
func (r *Registry) Publish(t *testing.T, name, version, postinstall string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pkg")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pkg := map[string]any{"name": name, "version": version, "main": "index.js", "license": "MIT"}
	if postinstall != "" {
		pkg["scripts"] = map[string]string{"postinstall": postinstall}
	}
	data, _ := json.Marshal(pkg)
	files["package.json"] = string(data)
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.NPM(t, dir, "publish", "--registry", r.URL)
}

// Skill makes a skill folder whose package.json depends on deps
// (name: version) and whose lock file npm makes against the registry
// (without running any install script); scripts are its scripts/ files.
func (r *Registry) Skill(t *testing.T, name string, deps map[string]string, scripts map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	skillMD := fmt.Sprintf("---\nname: %s\ndescription: A test skill that uses Node packages.\n---\n\nRun the scripts.\n", name)
	data, _ := json.Marshal(map[string]any{"name": name, "version": "1.0.0", "private": true, "dependencies": deps})
	files := map[string]string{"SKILL.md": skillMD, "package.json": string(data)}
	for f, body := range scripts {
		files[filepath.Join("scripts", f)] = body
	}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r.NPM(t, dir, "install", "--package-lock-only", "--ignore-scripts", "--registry", r.URL)
	return dir
}

// lockedBuffer is Verdaccio's output, written by exec's copier and read
// by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
