package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// mcpSession is a skill-sandbox mcp over stdio, one call at a time.
type mcpSession struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  interface{ Write([]byte) (int, error) }
	dec    *json.Decoder
	stderr *bytes.Buffer
	id     int
}

// startMCP starts skill-sandbox mcp with args.
func startMCP(t *testing.T, args ...string) *mcpSession {
	t.Helper()
	s := &mcpSession{t: t, cmd: exec.Command(cliBinary, append([]string{"mcp"}, args...)...), stderr: &bytes.Buffer{}}
	s.cmd.Stderr = s.stderr
	in, err := s.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	s.stdin, s.dec = in, json.NewDecoder(out)
	return s
}

// call calls tool with args and returns the structured result.
func (s *mcpSession) call(tool string, args map[string]any) map[string]any {
	s.t.Helper()
	s.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	s.stdin.Write(append(b, '\n'))
	var resp struct {
		Result map[string]any `json:"result"`
	}
	if err := s.dec.Decode(&resp); err != nil {
		s.t.Fatalf("response: %v; stderr:\n%s", err, s.stderr.String())
	}
	return resp.Result
}

// records closes stdin, waits for the server and returns its records.
func (s *mcpSession) records() []audit.Record {
	s.t.Helper()
	s.stdin.(interface{ Close() error }).Close()
	if err := s.cmd.Wait(); err != nil {
		s.t.Fatalf("server: %v\n%s", err, s.stderr.String())
	}
	var recs []audit.Record
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		if isRecordLine(line) {
			recs = append(recs, parseRecord(s.t, []byte(line)))
		}
	}
	return recs
}

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
	s := startMCP(t, "--skills", skill, "--backend", "gvisor", "--backend-fallback")
	if res := s.call("run_command", map[string]any{"command": "echo hi"}); res["isError"] != false {
		t.Fatalf("run_command: %v\n%s", res, s.stderr.String())
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
	s := startMCP(t, "--skills", filepath.Dir(skill), "--policy", pol, "--prestart", "0")
	run := map[string]any{"skill": "word-stats", "script": "stats.py", "args": []string{"references/sample.txt"}}
	if res := s.call("run_skill_script", run); res["isError"] != false {
		t.Fatalf("signed skill: %v\n%s", res, s.stderr.String())
	}
	res := s.call("run_command", map[string]any{"command": "uname -r"})
	if b, _ := json.Marshal(res["structuredContent"]); res["isError"] != false || !strings.Contains(string(b), "4.4.0") {
		t.Fatalf("run_command uname -r: %v\n%s", res, s.stderr.String())
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
