package main

import (
	"fmt"
	"net/http"
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

// TestPrepareBothKinds: a skill with Python requirements and a
// package.json with its lock file gets both environments: prepare builds
// both (one from the wheel index, one from Verdaccio) and records both,
// --check reports both, run, mcp and serve give a Python script and a
// Node script their packages, list, list_skills and GET /v1/skills show
// both states, and a change to the Node one refuses the runs.
func TestPrepareBothKinds(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // its own cache: prune counts what this test made
	if out, err := exec.Command("/usr/bin/python3", "-c", "import venv, pip").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("/usr/bin/python3 has no venv or pip: %v %s", err, out)
		}
		t.Skipf("/usr/bin/python3 has no venv or pip (Debian: python3-venv, python3-pip): %v %s", err, out)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node not found")
		}
		t.Skip("node not found")
	}
	requireSandbox(t, newSkill(t, nil))
	srv, downloads := cliIndex(t)
	reg := verdaccio.Start(t)
	reg.Publish(t, "both-demo", "1.0.0", "", map[string]string{"index.js": "exports.x = 'from both-demo';\n"})
	skill := reg.Skill(t, "both-kinds", map[string]string{"both-demo": "1.0.0"}, map[string]string{
		"use.js": "console.log(require('both-demo').x);\n", "use.py": "import demo_pkg\nprint(demo_pkg.X)\n"})
	if err := os.WriteFile(filepath.Join(skill, "requirements.txt"), []byte("demo-pkg==1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, "", "prepare", "--check", skill)
	if msg, _, _ := strings.Cut(r.Stderr, "{"); r.Code != 1 || strings.Count(msg, "environment not prepared") != 2 {
		t.Errorf("prepare --check before: exit %d stderr %s", r.Code, r.Stderr)
	}
	r = runCLI(t, "", "prepare", "--index", srv.URL+"/simple", "--registry", reg.URL, skill)
	if r.Code != 0 || downloads.Load() != 1 || strings.Count(r.Stdout, " prepared: ") != 2 ||
		!strings.Contains(r.Stdout, "(Python, ") || !strings.Contains(r.Stdout, "(Node, ") {
		t.Fatalf("prepare: exit %d, %d downloads\nstdout %s\nstderr %s", r.Code, downloads.Load(), r.Stdout, r.Stderr)
	}
	rec := stderrRecord(t, r.Stderr)
	py, node := rec.Environment, rec.NodeEnvironment
	if py == nil || !py.Built || len(py.Installed) != 1 || py.Installed[0].Name != "demo-pkg" ||
		node == nil || !node.Built || len(node.Installed) != 1 || node.Installed[0].Name != "both-demo" || py.Key == node.Key {
		t.Fatalf("prepare record: environment %+v node_environment %+v", py, node)
	}
	r = runCLI(t, "", "prepare", "--check", skill)
	if r.Code != 0 || !strings.Contains(r.Stdout, "already prepared: "+py.Path) || !strings.Contains(r.Stdout, "already prepared: "+node.Path) {
		t.Errorf("prepare --check after: exit %d stdout %s stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, "", "list", skill)
	if r.Code != 0 || !strings.Contains(r.Stdout, "environment: python prepared: "+filepath.Join(skill, "requirements.txt")+" ("+py.Digest+")") ||
		!strings.Contains(r.Stdout, "environment: node prepared: "+filepath.Join(skill, "package-lock.json")+" ("+node.Digest+")") {
		t.Errorf("list: exit %d stdout %s stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	for script, want := range map[string]string{"use.py": "42\n", "use.js": "from both-demo\n"} {
		r = runCLI(t, "", "audit", skill, script)
		got := stderrRecord(t, r.Stderr)
		if r.Code != 0 || r.Stdout != want || got.Environment == nil || got.Environment.Digest != py.Digest ||
			got.NodeEnvironment == nil || got.NodeEnvironment.Digest != node.Digest {
			t.Errorf("run %s: exit %d stdout %q environment %+v node_environment %+v\n%s", script, r.Code, r.Stdout, got.Environment, got.NodeEnvironment, r.Stderr)
		}
	}

	m := startMCPProc(t, "--skills", skill)
	out, _, _ := m.call("list_skills", map[string]any{})
	if env := digKeys(out, "skills"); env == nil {
		t.Fatalf("list_skills: %v", out)
	}
	st := out["skills"].([]any)[0].(map[string]any)["environment"]
	if digKeys(st, "state") != "prepared" || digKeys(st, "node", "state") != "prepared" || digKeys(st, "node", "file") != filepath.Join(skill, "package-lock.json") {
		t.Errorf("list_skills environment: %v", st)
	}
	for script, want := range map[string]string{"use.py": "42\n", "use.js": "from both-demo\n"} {
		out, isErr, _ := m.call("run_skill_script", map[string]any{"skill": filepath.Base(skill), "script": script})
		if isErr || dig(out, "stdout", "text") != want || out["node_environment"] == nil {
			t.Errorf("mcp run %s: %v", script, out)
		}
	}
	sv := startServe(t, "--tokens", writeTokens(t, filepath.Dir(skill)))
	if code, body := servePost(t, sv, `{"skill":"both-kinds","script":"use.js"}`); code != http.StatusOK || !strings.Contains(body, `"text":"from both-demo\n"`) {
		t.Errorf("serve execution: %d %s", code, body)
	}

	// A change to the Node environment refuses every run of the skill.
	if err := os.WriteFile(filepath.Join(node.Path, "node_modules", "both-demo", "index.js"), []byte("exports.x = 'tampered';\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "run", skill, "use.py"); r.Code != 1 || !strings.Contains(r.Stderr, "environment changed since it was built") {
		t.Errorf("run with a changed Node environment: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runCLI(t, "", "list", skill); !strings.Contains(r.Stdout, "environment: python prepared: ") || !strings.Contains(r.Stdout, "environment: node changed: ") {
		t.Errorf("list after the change: stdout %s", r.Stdout)
	}
	out, _, _ = m.call("list_skills", map[string]any{})
	st = out["skills"].([]any)[0].(map[string]any)["environment"]
	if digKeys(st, "state") != "prepared" || digKeys(st, "node", "state") != "changed" {
		t.Errorf("list_skills after the change: %v", st)
	}
	if out, isErr, _ := m.call("run_skill_script", map[string]any{"skill": "both-kinds", "script": "use.py"}); !isErr || !strings.Contains(fmt.Sprint(out["error"]), "changed since it was built") {
		t.Errorf("mcp run with a changed Node environment: %v", out)
	}
	if code, body := servePost(t, sv, `{"skill":"both-kinds","script":"use.py"}`); code != http.StatusUnprocessableEntity || !strings.Contains(body, "changed since it was built") {
		t.Errorf("serve execution with a changed Node environment: %d %s", code, body)
	}
	r = runCLI(t, "", "prepare", "--index", srv.URL+"/simple", "--registry", reg.URL, skill)
	if r.Code != 0 || downloads.Load() != 1 || !strings.Contains(r.Stdout, "already prepared: "+py.Path) || !strings.Contains(r.Stdout, skill+" prepared: "+node.Path) {
		t.Errorf("prepare after the change: exit %d, %d downloads\nstdout %s\nstderr %s", r.Code, downloads.Load(), r.Stdout, r.Stderr)
	}
	if r := runCLI(t, "", "run", skill, "use.js"); r.Code != 0 || r.Stdout != "from both-demo\n" {
		t.Errorf("run after the rebuild: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestPrepareBothKindsNoLock: a skill with Python requirements and a
// package.json without its lock file is refused by prepare, which names
// the missing file.
func TestPrepareBothKindsNoLock(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	skill := newSkill(t, map[string]string{"requirements.txt": "demo-pkg==1.0\n", "package.json": `{"dependencies": {"a": "1.0.0"}}`})
	r := runCLI(t, "", "prepare", "--check", skill)
	if r.Code != 1 || !strings.Contains(r.Stderr, "environment not prepared") || !strings.Contains(r.Stderr, "no package-lock.json beside package.json") {
		t.Errorf("exit %d stderr %s", r.Code, r.Stderr)
	}
	r = runCLI(t, "", "list", skill)
	if !strings.Contains(r.Stdout, "environment: python not_prepared: ") || !strings.Contains(r.Stdout, "environment: node invalid: no package-lock.json") {
		t.Errorf("list: stdout %s", r.Stdout)
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
