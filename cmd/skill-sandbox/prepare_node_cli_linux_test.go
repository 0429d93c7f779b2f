package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/verdaccio"
)

// TestPrepareNodeCLI: prepare builds a skill's node_modules from
// Verdaccio on loopback with --registry, run requires the package, a
// second skill with the same lock file reuses the environment, a skill
// without a lock file is refused by prepare with the reason, and a
// changed environment refuses the run and is rebuilt by prepare.
func TestPrepareNodeCLI(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // its own cache: prune counts what this test made
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node not found")
		}
		t.Skip("node not found")
	}
	requireSandbox(t, newSkill(t, nil))
	reg := verdaccio.Start(t)
	reg.Publish(t, "cli-demo", "2.0.0", "", map[string]string{"index.js": "exports.x = 'from cli-demo';\n"})
	deps := map[string]string{"cli-demo": "2.0.0"}
	skill := reg.Skill(t, "node-one", deps, map[string]string{"use.js": "console.log(require('cli-demo').x);\n"})

	r := runCLI(t, "", "run", skill, "use.js")
	if r.Code != 1 || !strings.Contains(r.Stderr, "warning: environment not prepared") || !strings.Contains(r.Stderr, "Cannot find module 'cli-demo'") {
		t.Fatalf("unprepared run: exit %d stderr %s", r.Code, r.Stderr)
	}
	if r := runCLI(t, "", "prepare", "--check", skill); r.Code != 1 || !strings.Contains(r.Stderr, "environment not prepared") {
		t.Errorf("prepare --check: exit %d stderr %s", r.Code, r.Stderr)
	}
	r = runCLI(t, "", "prepare", "--registry", reg.URL, skill)
	if r.Code != 0 || !strings.Contains(r.Stdout, "prepared: ") {
		t.Fatalf("prepare: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	rec := stderrRecord(t, r.Stderr)
	e := rec.Environment
	if e == nil || !e.Built || len(e.Installed) != 1 || e.Installed[0].Name != "cli-demo" || e.Installed[0].Version != "2.0.0" ||
		!strings.HasPrefix(e.Installed[0].Integrity, "sha512-") {
		t.Fatalf("prepare record environment %+v", e)
	}
	r = runCLI(t, "", "audit", skill, "use.js")
	if r.Code != 0 || r.Stdout != "from cli-demo\n" {
		t.Fatalf("run: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if got := stderrRecord(t, r.Stderr).Environment; got == nil || got.Built || got.Digest != e.Digest {
		t.Errorf("run record environment %+v, want digest %s", got, e.Digest)
	}
	other := reg.Skill(t, "node-two", deps, map[string]string{"use.mjs": "import d from 'cli-demo';\nconsole.log(d.x);\n"})
	r = runCLI(t, "", "prepare", "--registry", "http://127.0.0.1:1/", other)
	if r.Code != 0 || !strings.Contains(r.Stdout, "already prepared: "+e.Path) {
		t.Errorf("prepare of a second skill with the same lock file: exit %d stdout %s stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runCLI(t, "", "run", other, "use.mjs"); r.Code != 0 || r.Stdout != "from cli-demo\n" {
		t.Errorf("ESM run: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	// No lock file: prepare refuses with the reason; run warns and goes on.
	nolock := newSkill(t, map[string]string{"package.json": `{"dependencies": {"cli-demo": "2.0.0"}}`, "scripts/hi.js": "console.log('hi');\n"})
	if r := runCLI(t, "", "prepare", "--registry", reg.URL, nolock); r.Code != 1 || !strings.Contains(r.Stderr, "no package-lock.json beside package.json") {
		t.Errorf("prepare without a lock file: exit %d stderr %s", r.Code, r.Stderr)
	}
	if r := runCLI(t, "", "run", nolock, "hi.js"); r.Code != 0 || r.Stdout != "hi\n" || !strings.Contains(r.Stderr, "no package-lock.json") {
		t.Errorf("run without a lock file: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	// A changed environment refuses the run; prepare rebuilds it.
	if err := os.WriteFile(filepath.Join(e.Path, "node_modules", "cli-demo", "index.js"), []byte("exports.x = 'changed';\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "run", skill, "use.js")
	if r.Code == 0 || !strings.Contains(r.Stderr, "environment changed since it was built") || strings.Contains(r.Stdout, "changed") {
		t.Errorf("run of a changed environment: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runCLI(t, "", "prepare", "--registry", reg.URL, skill); r.Code != 0 || !strings.Contains(r.Stdout, "prepared: ") {
		t.Errorf("prepare of a changed environment: exit %d stdout %s stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runCLI(t, "", "run", skill, "use.js"); r.Code != 0 || r.Stdout != "from cli-demo\n" {
		t.Errorf("run after the rebuild: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	// run --prepare builds a missing environment first, from --registry.
	reg.Publish(t, "cli-third", "0.1.0", "", map[string]string{"index.js": "exports.y = 'third';\n"})
	third := reg.Skill(t, "node-three", map[string]string{"cli-third": "0.1.0"}, map[string]string{"use.cjs": "console.log(require('cli-third').y);\n"})
	r = runCLI(t, "", "audit", "--prepare", "--registry", reg.URL, third, "use.cjs")
	if r.Code != 0 || !strings.HasSuffix(r.Stdout, "third\n") {
		t.Errorf("run --prepare: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	thirdEnv := stderrRecord(t, r.Stderr).Environment
	if thirdEnv == nil || !thirdEnv.Built {
		t.Fatalf("run --prepare record environment %+v", thirdEnv)
	}
	// --prune keeps what the skills named need.
	// (Other tests' environments in this process's cache may go too.)
	if r := runCLI(t, "", "prepare", "--prune", skill); r.Code != 0 || !strings.Contains(r.Stdout, "removed "+thirdEnv.Path+" ") || strings.Contains(r.Stdout, e.Path) {
		t.Errorf("prune: exit %d stdout %s stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runCLI(t, "", "prepare", "--check", skill); r.Code != 0 || !strings.Contains(r.Stdout, "already prepared") {
		t.Errorf("prepare --check after prune: exit %d stdout %s stderr %s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestPrepareBothKinds: a Python skill that also has a package.json with
// dependencies (with or without a lock file) keeps its Python
// environment, after a warning: prepare --check reports on the Python
// one.
func TestPrepareBothKinds(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // its own cache: prune counts what this test made
	for _, tt := range []struct {
		name, lock, want string
	}{
		{"no lock file", "", "the skill's Node dependencies are not prepared: no package-lock.json"},
		{"lock file", `{"lockfileVersion": 3, "packages": {"": {"dependencies": {"a": "1.0.0"}}, "node_modules/a": {"version": "1.0.0", "integrity": "sha512-A"}}}`,
			"only the Python environment is prepared and used"},
	} {
		files := map[string]string{"requirements.txt": "demo-pkg==1.0\n", "package.json": `{"dependencies": {"a": "1.0.0"}}`}
		if tt.lock != "" {
			files["package-lock.json"] = tt.lock
		}
		r := runCLI(t, "", "prepare", "--check", newSkill(t, files))
		if r.Code != 1 || !strings.Contains(r.Stderr, tt.want) || !strings.Contains(r.Stderr, "environment not prepared") {
			t.Errorf("%s: exit %d stderr %s", tt.name, r.Code, r.Stderr)
		}
	}
}

// TestPrepareServersNode: skill-sandbox mcp lists a Node skill's
// environment, runs its script with the node_modules prepare built, and
// leaves building it to the operator: prepare_skill refuses it.
func TestPrepareServersNode(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node not found")
		}
		t.Skip("node not found")
	}
	requireSandbox(t, newSkill(t, nil))
	reg := verdaccio.Start(t)
	reg.Publish(t, "srv-demo", "1.0.0", "", map[string]string{"index.js": "exports.x = 'from srv-demo';\n"})
	skill := reg.Skill(t, "node-srv", map[string]string{"srv-demo": "1.0.0"}, map[string]string{"use.js": "console.log(require('srv-demo').x);\n"})
	use := map[string]any{"skill": filepath.Base(skill), "script": "use.js"}

	before := startMCPProc(t, "--skills", skill, "--allow-prepare")
	if st := before.skillEnvState(); st != "not_prepared" {
		t.Errorf("list_skills before prepare: state %v", st)
	}
	if out, isErr, _ := before.call("run_skill_script", use); !isErr || !strings.Contains(dig(out, "stderr", "text"), "Cannot find module 'srv-demo'") {
		t.Errorf("run before prepare: %v", out)
	}
	if _, isErr, msg := before.call("prepare_skill", map[string]any{"skill": filepath.Base(skill)}); !isErr || !strings.Contains(msg, "Python environments only") {
		t.Errorf("prepare_skill of a Node skill: error %v, %s", isErr, msg)
	}
	if r := runCLI(t, "", "prepare", "--registry", reg.URL, skill); r.Code != 0 {
		t.Fatalf("prepare: exit %d\n%s", r.Code, r.Stderr)
	}
	after := startMCPProc(t, "--skills", skill)
	if st := after.skillEnvState(); st != "prepared" {
		t.Errorf("list_skills after prepare: state %v", st)
	}
	if out, isErr, _ := after.call("run_skill_script", use); isErr || dig(out, "stdout", "text") != "from srv-demo\n" {
		t.Errorf("run after prepare: %v", out)
	}
}
