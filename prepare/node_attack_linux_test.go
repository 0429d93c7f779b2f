package prepare

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/verdaccio"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// TestNodeBuildAttacks: a package whose postinstall script writes
// outside the environment, reads a file of the caller's or ~/.ssh, or
// reaches a host other than the registry (directly, or through the
// run's proxy) is stopped, and the prepare fails with the reason; the
// same package without the attack builds, and the reader built with the
// mount namespace and Landlock disabled does read the secret, so the
// failures are the sandbox's.
func TestNodeBuildAttacks(t *testing.T) {
	node := needNodeBuild(t)
	reg := verdaccio.Start(t)
	c := Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Reachable by uid 65534, the identity of a root caller's run
	// without a mount namespace (the unprotected run below).
	for _, d := range []string{filepath.Dir(filepath.Dir(c.Dir)), filepath.Dir(c.Dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret")
	if err := os.WriteFile(secret, []byte("SECRET-VALUE"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(secretDir, 0o755); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(secretDir, "planted")
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		fmt.Fprint(w, "reached")
	}))
	defer other.Close()
	home, _ := os.UserHomeDir()
	// Each attack throws when it is stopped: the postinstall script
	// fails, and so does npm ci, with the error in its output.
	get := `const http = require('http');
const u = new URL(%q);
const p = process.env.HTTP_PROXY ? new URL(process.env.HTTP_PROXY) : null;
const opts = p ? {host: p.hostname, port: p.port, path: u.href} : {host: u.hostname, port: u.port, path: '/'};
http.get(opts, (res) => {
  let b = '';
  res.on('data', (d) => b += d);
  res.on('end', () => {
    if (res.statusCode !== 200) { console.error('attack: HTTP ' + res.statusCode); process.exit(1); }
    require('fs').writeFileSync('leak.txt', b);
  });
}).on('error', (e) => { console.error('attack: ' + e.message); process.exit(1); });
`
	tests := []struct {
		name, attack string
		reason       string // in npm's output; "" builds
	}{
		{"benign-pkg", "require('fs').writeFileSync('leak.txt', 'nothing')", ""},
		{"writer-pkg", fmt.Sprintf("require('fs').writeFileSync(%q, 'pwned')", planted), "ENOENT: no such file or directory, open '" + planted + "'"},
		{"reader-pkg", fmt.Sprintf("require('fs').writeFileSync('leak.txt', require('fs').readFileSync(%q))", secret), "ENOENT: no such file or directory, open '" + secret + "'"},
		{"ssh-pkg", fmt.Sprintf("require('fs').writeFileSync('leak.txt', String(require('fs').readdirSync(%q)))", filepath.Join(home, ".ssh")), "ENOENT: no such file or directory, scandir '" + filepath.Join(home, ".ssh") + "'"},
		{"caller-pkg", fmt.Sprintf(get, other.URL), "attack: HTTP 403"},
	}
	for _, tt := range tests {
		reg.Publish(t, tt.name, "1.0.0", "node attack.js", map[string]string{"index.js": "module.exports = 1;\n", "attack.js": tt.attack + "\n"})
		skill := reg.Skill(t, "skill-"+tt.name, map[string]string{tt.name: "1.0.0"}, nil)
		deps, err := LoadNode(skill)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		env, _, err := c.BuildNode(context.Background(), deps, node, NodeBuildOptions{Registry: reg.URL, Sandbox: run.Sandbox{Stdout: &out, Stderr: &out}})
		if tt.reason == "" {
			if err != nil {
				t.Fatalf("%s: %v\n%s", tt.name, err, out.String())
			}
			if b, err := os.ReadFile(filepath.Join(env.NodeModules(), tt.name, "leak.txt")); err != nil || string(b) != "nothing" {
				t.Fatalf("%s: postinstall did not run: %v %q", tt.name, err, b)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "npm ci in the sandbox failed") {
			t.Errorf("%s: BuildNode error %v, want npm's failure\n%s", tt.name, err, out.String())
		}
		if !strings.Contains(out.String(), tt.reason) || strings.Contains(out.String(), "SECRET-VALUE") {
			t.Errorf("%s: npm's output lacks %q (or shows the secret):\n%s", tt.name, tt.reason, out.String())
		}
		if _, err := c.Lookup(NodeKey(deps, node)); !errors.Is(err, ErrNotPrepared) {
			t.Errorf("%s: after a failed build Lookup says %v", tt.name, err)
		}
	}
	// The reader's attack works without the layers that stop it.
	deps, err := LoadNode(reg.Skill(t, "skill-reader-again", map[string]string{"reader-pkg": "1.0.0"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	env, _, err := c.BuildNode(context.Background(), deps, node, NodeBuildOptions{Registry: reg.URL,
		Sandbox: run.Sandbox{Stdout: &out, Stderr: &out, Disable: []run.Layer{run.LayerMountNS, run.LayerLandlockFS}}})
	if err != nil {
		t.Fatalf("reader without mountns and landlock-fs: %v\n%s", err, out.String())
	}
	if b, err := os.ReadFile(filepath.Join(env.NodeModules(), "reader-pkg", "leak.txt")); err != nil || string(b) != "SECRET-VALUE" {
		t.Errorf("reader without mountns and landlock-fs did not read the secret: %v %q", err, b)
	}
	if _, err := os.Lstat(planted); err == nil {
		t.Errorf("the install script planted %s", planted)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the install script reached another host %d times", n)
	}
	if entries, _ := os.ReadDir(c.Dir); len(entries) != 2 {
		t.Errorf("cache holds %d entries, want benign's and the unprotected reader's", len(entries))
	}
}
