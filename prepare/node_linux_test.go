package prepare

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/verdaccio"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// TestNodeBuildRunShareTamper: a skill whose script requires (and
// another whose script imports, as ESM) a package published to a local
// registry runs after BuildNode; a second skill with the same lock file
// shares the environment; a changed file of it is seen by Lookup and the
// environment rebuilt.
func TestNodeBuildRunShareTamper(t *testing.T) {
	node := needNodeBuild(t)
	reg := verdaccio.Start(t)
	reg.Publish(t, "demo-left", "1.0.0", "", map[string]string{"index.js": "module.exports = (s) => '<' + s + '>';\n"})
	reg.Publish(t, "demo-pkg", "1.2.0", "node -e \"require('fs').writeFileSync('built.txt', 'postinstall ran')\"", map[string]string{
		"index.js": "const left = require('demo-left');\nexports.greet = (n) => left('hello ' + n);\n"})
	// demo-pkg depends on nothing in its package.json: add demo-left to
	// the skill so both are installed flat.
	deps := map[string]string{"demo-pkg": "1.2.0", "demo-left": "^1.0.0"}
	cjs := reg.Skill(t, "cjs-skill", deps, map[string]string{"main.js": "const d = require('demo-pkg');\nconsole.log(d.greet('cjs'));\n"})
	esm := reg.Skill(t, "esm-skill", deps, map[string]string{"main.mjs": "import d from 'demo-pkg';\nimport fs from 'node:fs';\nconsole.log(d.greet('esm'));\n"})
	c := Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d1, err := LoadNode(cjs)
	if err != nil || d1 == nil {
		t.Fatalf("LoadNode: %v %v", d1, err)
	}
	key := NodeKey(d1, node)
	if _, err := c.Lookup(key); !errors.Is(err, ErrNotPrepared) {
		t.Fatalf("Lookup before BuildNode: %v", err)
	}
	var out strings.Builder
	start := time.Now()
	env, res, err := c.BuildNode(context.Background(), d1, node, NodeBuildOptions{Registry: reg.URL, Sandbox: run.Sandbox{Stdout: &out, Stderr: &out}})
	if err != nil {
		t.Fatalf("BuildNode: %v\n%s", err, out.String())
	}
	t.Logf("BuildNode of 2 packages: %v", time.Since(start))
	if res.Network == nil || res.Network.Total == 0 {
		t.Errorf("npm did not go through the proxy: %+v", res.Network)
	}
	if len(env.Installed) != 2 || env.Installed[0].Name != "demo-left" || env.Installed[1].Name != "demo-pkg" ||
		env.Installed[1].Version != "1.2.0" || !strings.HasPrefix(env.Installed[1].Integrity, "sha512-") {
		t.Errorf("installed %+v", env.Installed)
	}
	if b, err := os.ReadFile(filepath.Join(env.NodeModules(), "demo-pkg", "built.txt")); err != nil || string(b) != "postinstall ran" {
		t.Errorf("the postinstall script's file: %v %q", err, b)
	}
	for _, tt := range []struct{ skill, script, want string }{
		{cjs, "main.js", "<hello cjs>\n"},
		{esm, "main.mjs", "<hello esm>\n"},
	} {
		d, err := LoadNode(tt.skill)
		if err != nil {
			t.Fatal(err)
		}
		// The second skill, with the same dependencies, shares it.
		got, err := c.Lookup(NodeKey(d, node))
		if err != nil || got.Dir != env.Dir {
			t.Fatalf("%s: Lookup: %v %v", tt.script, got, err)
		}
		var so, se strings.Builder
		sb := run.Sandbox{SkillDir: tt.skill, Interpreters: []string{got.Node()}, NodeModules: got.NodeModules(), Stdout: &so, Stderr: &se}
		r, err := sb.Run(context.Background(), tt.script, nil)
		if err != nil || r.ExitCode != 0 || so.String() != tt.want {
			t.Errorf("%s: %v exit %v: %q\n%s", tt.script, err, r, so.String(), se.String())
		}
		// Without the environment the package is not found.
		so.Reset()
		se.Reset()
		sb = run.Sandbox{SkillDir: tt.skill, Stdout: &so, Stderr: &se}
		if r, err := sb.Run(context.Background(), tt.script, nil); err != nil || r.ExitCode == 0 || !strings.Contains(se.String(), "demo-pkg") {
			t.Errorf("%s without the environment: %v %+v %s", tt.script, err, r, se.String())
		}
	}
	// The environment is read-only to runs.
	var se strings.Builder
	w := filepath.Join(env.NodeModules(), "demo-pkg", "index.js")
	sb := run.Sandbox{SkillDir: cjs, Interpreters: []string{env.Node()}, NodeModules: env.NodeModules(), Stderr: &se}
	if r, err := sb.Command(context.Background(), []string{"node", "-e", "require('fs').writeFileSync(process.argv[1], 'x')", w}); err != nil || r.ExitCode == 0 {
		t.Errorf("a run wrote into the environment: %v %+v", err, r)
	}
	if _, err := c.Lookup(key); err != nil {
		t.Fatalf("Lookup after the runs: %v", err)
	}
	// A changed file is seen; BuildNode replaces the environment.
	if err := os.WriteFile(w, []byte("require('child_process').execSync('id')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Lookup(key); !errors.Is(err, ErrTampered) {
		t.Fatalf("Lookup of a changed file: %v", err)
	}
	env2, _, err := c.BuildNode(context.Background(), d1, node, NodeBuildOptions{Registry: reg.URL})
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if got, err := c.Lookup(key); err != nil || got.Digest != env2.Digest {
		t.Fatalf("Lookup after the rebuild: %v %v", got, err)
	}
	if b, _ := os.ReadFile(w); strings.Contains(string(b), "execSync") {
		t.Error("the rebuild kept the changed file")
	}
	if entries := cacheEntries(c.Dir); len(entries) != 1 {
		t.Errorf("cache holds %d entries, want 1", len(entries))
	}
}

// TestNodeBuildShrinkwrap: a skill that ships npm-shrinkwrap.json
// instead of package-lock.json is built from it (npm ci reads either),
// and a script requires the package; the same skill with a package-lock.json
// of the same content shares the environment.
func TestNodeBuildShrinkwrap(t *testing.T) {
	node := needNodeBuild(t)
	reg := verdaccio.Start(t)
	reg.Publish(t, "wrap-demo", "3.1.0", "", map[string]string{"index.js": "exports.x = 'from wrap-demo';\n"})
	skill := reg.Skill(t, "wrap-skill", map[string]string{"wrap-demo": "3.1.0"}, map[string]string{"main.js": "console.log(require('wrap-demo').x);\n"})
	withLock, err := LoadNode(skill)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(skill, PackageLockFile), filepath.Join(skill, ShrinkwrapFile)); err != nil {
		t.Fatal(err)
	}
	deps, err := LoadNode(skill)
	if err != nil || deps == nil || filepath.Base(deps.Lock) != ShrinkwrapFile {
		t.Fatalf("LoadNode with npm-shrinkwrap.json: %+v %v", deps, err)
	}
	if NodeKey(deps, node) != NodeKey(withLock, node) {
		t.Error("the same lock file under the other name has another key")
	}
	c := Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	env, _, err := c.BuildNode(context.Background(), deps, node, NodeBuildOptions{Registry: reg.URL, Sandbox: run.Sandbox{Stdout: &out, Stderr: &out}})
	if err != nil {
		t.Fatalf("BuildNode: %v\n%s", err, out.String())
	}
	if len(env.Installed) != 1 || env.Installed[0].Name != "wrap-demo" || env.Installed[0].Version != "3.1.0" {
		t.Errorf("installed %+v", env.Installed)
	}
	var so, se strings.Builder
	sb := run.Sandbox{SkillDir: skill, Interpreters: []string{env.Node()}, NodeModules: env.NodeModules(), Stdout: &so, Stderr: &se}
	if r, err := sb.Run(context.Background(), "main.js", nil); err != nil || r.ExitCode != 0 || so.String() != "from wrap-demo\n" {
		t.Errorf("run: %v %+v %q\n%s", err, r, so.String(), se.String())
	}
}
