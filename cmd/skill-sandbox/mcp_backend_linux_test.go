package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// noRunscPath sets a PATH with the interpreters the tests' scripts need
// and no runsc.
func noRunscPath(t *testing.T) {
	t.Helper()
	bin := t.TempDir()
	for _, name := range []string{"bash", "sh", "python3", "env", "uname"} {
		if p, err := exec.LookPath(name); err == nil {
			if err := os.Symlink(p, filepath.Join(bin, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	os.Chmod(bin, 0o755)
	t.Setenv("PATH", bin)
}

// TestMCPBackendFailClosed checks that mcp --backend gvisor does not
// start without runsc, saying why and how to fix it, and that with
// --backend-fallback its runs go native with the reason recorded.
func TestMCPBackendFailClosed(t *testing.T) {
	skill := newSkill(t, nil)
	noRunscPath(t)
	r := runCLI(t, "", "mcp", "--skills", skill, "--backend", "gvisor")
	if r.Code != 1 || !strings.Contains(r.Stderr, "every run on the gvisor backend would be refused") || !strings.Contains(r.Stderr, "apt-get install runsc") {
		t.Fatalf("exit %d, stderr %q: want refused with the fix", r.Code, r.Stderr)
	}
	s := startMCPProc(t, "--skills", skill, "--backend", "gvisor", "--backend-fallback")
	if out, isErr, msg := s.call("run_command", map[string]any{"command": "echo hi"}); isErr {
		t.Fatalf("run_command: %v %s\n%s", out, msg, s.stderr.String())
	}
	recs := s.records()
	if len(recs) != 1 || recs[0].Backend != "" || !strings.Contains(recs[0].BackendFallback, "not on PATH") {
		t.Fatalf("records %+v: want one native run with backend_fallback", recs)
	}
}

// TestMCPBackendByTrust checks an mcp server under the rule "unsigned on
// gvisor, signed native": the signed skill's script runs native, a
// run_command (no signature) meets gVisor's kernel.
func TestMCPBackendByTrust(t *testing.T) {
	if _, err := exec.LookPath("runsc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("runsc is missing under CI=true: %v", err)
		}
		t.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
	skill, allowed := signedSkill(t)
	pol := backendPolicy(t, allowed, "")
	s := startMCPProc(t, "--skills", filepath.Dir(skill), "--policy", pol)
	run := map[string]any{"skill": "word-stats", "script": "stats.py", "args": []string{"references/sample.txt"}}
	if out, isErr, msg := s.call("run_skill_script", run); isErr {
		t.Fatalf("signed skill: %v %s\n%s", out, msg, s.stderr.String())
	}
	out, isErr, msg := s.call("run_command", map[string]any{"command": "uname -r"})
	if b, _ := json.Marshal(out); isErr || !strings.Contains(string(b), "4.4.0") {
		t.Fatalf("run_command uname -r: %v %s\n%s", out, msg, s.stderr.String())
	}
	recs := s.records()
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	if recs[0].Backend != "" || !recs[0].Signature.Verified || recs[0].Signature.Required {
		t.Errorf("signed run: backend %q, signature %+v; want native, verified, not required", recs[0].Backend, recs[0].Signature)
	}
	if recs[1].Backend != "gvisor" {
		t.Errorf("run_command: backend %q, want gvisor", recs[1].Backend)
	}
}
