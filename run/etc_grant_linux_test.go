package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEtcGrantKeepsItsRules grants a folder in /etc that holds a
// deny-list entry, so that Landlock spells the grant out (list-only on the
// folder, read on each entry present when the run was planned), and makes
// a file there once the script runs: the script must not read it. A read
// rule on the sandbox's whole /etc, which a run with nothing of its own in
// /etc gets, would override the grant's rules; here each entry of /etc
// must keep its own.
func TestEtcGrantKeepsItsRules(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a folder in /etc")
	}
	fullIsolation(t)
	grant, err := os.MkdirTemp("/etc", "skill-sandbox-test-")
	if err != nil {
		t.Skipf("cannot make a folder in /etc: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(grant) })
	os.Chmod(grant, 0o755)
	for name, body := range map[string]string{"a.txt": "visible\n", "a.key": "secret\n"} {
		if err := os.WriteFile(filepath.Join(grant, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := newSkill(t, map[string]string{
		"late.py": `import os, sys, time
d = sys.argv[1]
print("ready", flush=True)
for _ in range(1000):
    if os.path.exists(d + "/late.txt"):
        break
    time.sleep(0.01)
for n in ("a.txt", "late.txt", "a.key"):
    try:
        open(d + "/" + n).read()
        print("READ", n)
    except OSError as e:
        print("DENIED", n, e.strerror)
`,
	})
	first := make(chan string, 1)
	out := &lineWriter{first: first}
	var errb bytes.Buffer
	sb := Sandbox{SkillDir: dir, ReadPaths: []string{grant}, DenyPaths: []string{filepath.Join(grant, "a.key")},
		Stdout: out, Stderr: &errb, Timeout: 30 * time.Second}
	go func() {
		select {
		case <-first: // "ready"
			os.WriteFile(filepath.Join(grant, "late.txt"), []byte("late\n"), 0o644)
		case <-time.After(20 * time.Second):
		}
	}()
	res, err := sb.Run(context.Background(), "late.py", []string{grant})
	res.WaitCleanup()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run: %v, exit %d\nstdout: %s\nstderr: %s", err, res.ExitCode, out.buf.String(), errb.String())
	}
	got := out.buf.String()
	for _, want := range []string{"READ a.txt\n", "DENIED late.txt", "DENIED a.key"} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
}
