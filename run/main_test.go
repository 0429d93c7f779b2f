package run

import (
	"bytes"
	"context"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/internal/tempmode"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// The sandbox re-executes this test binary as its init process.
	ExecInitIfRequested()
	if err := forbidUserNamespacesIfAsked(); err != nil {
		fmt.Fprintln(os.Stderr, "run tests:", err)
		os.Exit(1)
	}
	os.Exit(tempmode.Guard(m.Run))
}

// skillName is the folder and frontmatter name of every test skill.
const skillName = "probe"

// newSkill writes a valid skill named "probe" with the given scripts (name
// → content, made executable) and returns its folder. The folder and its
// parent are world-readable: when the tests run as root the sandbox runs as
// nobody, and t.TempDir() is private to the caller.
func newSkill(t testing.TB, scripts map[string]string) string {
	t.Helper()
	base, err := os.MkdirTemp("", "skill-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	dir := filepath.Join(base, skillName)
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: " + skillName + "\ndescription: A probe skill used by the run package tests to exercise the sandbox.\n---\n# Probe\n\nRuns test scripts.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, "scripts", name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// needTool skips the test when prog is not on the sandbox PATH.
func needTool(t testing.TB, prog string) {
	t.Helper()
	if _, err := lookPath(prog, sandboxPath); err != nil {
		t.Skipf("%s is not installed: %v", prog, err)
	}
}

// outcome is one run's result with its output as strings.
type outcome struct {
	res            *Result
	err            error
	stdout, stderr string
}

// runIn runs script of the skill in sb (SkillDir is set here; AllowDegraded
// in the re-run without user namespaces), streaming
// into buffers that are compared with the captured output.
func runIn(t testing.TB, sb Sandbox, dir, script string, args ...string) outcome {
	t.Helper()
	sb.SkillDir = dir
	if degradedRerun() && !sb.RequireIsolation {
		// Re-run without user namespaces: these tests check what still
		// holds in a degraded run (TestFallbackWithoutUserNamespaces checks
		// that the default refuses).
		sb.AllowDegraded = true
	}
	var out, errb bytes.Buffer
	sb.Stdout, sb.Stderr = &out, &errb
	if sb.Timeout == 0 {
		sb.Timeout = 20 * time.Second
	}
	res, err := sb.Run(context.Background(), script, args)
	if res == nil {
		t.Fatalf("Run returned a nil Result (err %v)", err)
	}
	// The checks after a run expect its sandbox gone (leftover processes
	// and cgroups); TestRunReturnsBeforeTeardown checks the early return.
	res.WaitCleanup()
	return outcome{res: res, err: err, stdout: out.String(), stderr: errb.String()}
}

// fullIsolation skips the test when this machine cannot apply every layer
// that guards the host (no user namespaces, old kernel without Landlock scopes, ...): the attack
// tests compare runs with and without one layer and need all the others.
func fullIsolation(t testing.TB) {
	t.Helper()
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"ok.py": "print('ok')\n"})
	o := runIn(t, Sandbox{}, dir, "ok.py")
	if o.err != nil {
		t.Fatalf("plain run failed: %v\nstderr: %s", o.err, o.stderr)
	}
	// The cgroup is not needed: it guards resources, not the host, and
	// its attacks are in TestCgroupAttacks, which checks for it.
	if missing := hostGuards(o.res.Missing); len(missing) > 0 {
		var why []string
		for _, m := range missing {
			why = append(why, string(m.Layer)+": "+m.Reason)
		}
		t.Skipf("not every layer is available here: %s", strings.Join(why, "; "))
	}
}
