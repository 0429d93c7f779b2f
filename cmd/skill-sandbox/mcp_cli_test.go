package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// TestMCPRefusedWorkspaceNotMade: a workspace refused for overlapping
// the skills folder is not made (here it would be in the source tree).
// The other usage errors of mcp are testdata/script/mcp-usage.txt.
func TestMCPRefusedWorkspaceNotMade(t *testing.T) {
	skills := repoPath("testdata", "example")
	ws := filepath.Join(skills, "word-stats", "out")
	r := runCLI(t, "", "mcp", "--skills", skills, "--workspace", ws)
	if r.Code != 1 || !strings.Contains(r.Stderr, "overlaps the skills folder") || r.Stdout != "" {
		t.Errorf("exit %d, want 1; stdout %q; stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Lstat(ws); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused workspace was made: %v", err)
	}
}

// TestMCPEOFStopsRuns starts runs through the server, closes its stdin and
// checks that the server exits, that no sandboxed process is left behind,
// and that each run has its record.
func TestMCPEOFStopsRuns(t *testing.T) {
	skills, err := filepath.Abs(repoPath("testdata", "example"))
	if err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("%d.%d", 900+os.Getpid()%99, time.Now().UnixNano()%1000) // a unique sleep length
	cmd := exec.Command(cliBinary, "mcp", "--skills", skills, "--max-runs", "3")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for i := 1; i <= 3; i++ {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"sleep %s"}}}`+"\n", i, marker)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(processesWith(marker)) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the runs did not start; found %v; stderr:\n%s", processesWith(marker), stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The server keeps init processes started ahead (--prestart, default 2)
	// once its pool has refilled.
	var pooled []string
	for deadline := time.Now().Add(20 * time.Second); len(pooled) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		pooled = pooledStagesOf(cmd.Process.Pid)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("server exit: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the server did not exit after EOF; stderr:\n%s", stderr.String())
	}
	if left := processesWith(marker); len(left) > 0 {
		t.Errorf("processes left behind after EOF: %v", left)
	}
	if len(pooled) == 0 {
		t.Log("no pre-started init process seen (no user namespaces?)")
	}
	for _, pid := range pooled {
		if comm, err := os.ReadFile(filepath.Join("/proc", pid, "comm")); err == nil && string(comm) == "ss-pooled\n" {
			t.Errorf("pre-started init process %s left behind after EOF", pid)
		}
	}
	var n int
	for _, line := range strings.Split(stderr.String(), "\n") {
		if isRecordLine(line) {
			rec := parseRecord(t, []byte(line))
			if !rec.Canceled || rec.MCP == nil || rec.MCP.Tool != "run_command" {
				t.Errorf("record: canceled %v, mcp %+v", rec.Canceled, rec.MCP)
			}
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d records, want 3; stderr:\n%s", n, stderr.String())
	}
}

// processesWith returns the pids of host processes whose command line
// contains s.
func processesWith(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(s)) && !bytes.Contains(cmdline, []byte("tools/call")) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// pooledStagesOf lists the children of pid that are pre-started init
// processes waiting for a run.
func pooledStagesOf(pid int) []string {
	ents, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range ents {
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil || !bytes.Contains(status, []byte(fmt.Sprintf("\nPPid:\t%d\n", pid))) {
			continue
		}
		if comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm")); err == nil && string(comm) == "ss-pooled\n" {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestMCPRequireSignature checks that with --require-signature (or an
// operator policy's [signature] section) a signed
// skill's script runs, an altered one is refused, and run_command (which
// could run any file) is refused; each call has its record.
func TestMCPRequireSignature(t *testing.T) {
	t.Run("flags", func(t *testing.T) { testMCPRequireSignature(t, false) })
	t.Run("policy", func(t *testing.T) { testMCPRequireSignature(t, true) })
}

// testMCPRequireSignature requires the signature with the flags or, with
// viaPolicy, with an operator policy's [signature] section.
func testMCPRequireSignature(t *testing.T, viaPolicy bool) {
	skill, allowed := signedSkill(t)
	args := []string{"mcp", "--skills", filepath.Dir(skill), "--require-signature", "--allowed-signers", allowed}
	if viaPolicy {
		pol := writeFile(t, "op.toml", "[signature]\nrequire = true\nallowed_signers = \""+allowed+"\"\n")
		args = []string{"mcp", "--skills", filepath.Dir(skill), "--policy", pol}
	}
	cmd := exec.Command(cliBinary, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	dec := json.NewDecoder(stdout)
	call := func(id int, tool string, args map[string]any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
		stdin.Write(append(b, '\n'))
		var resp struct {
			Result map[string]any `json:"result"`
		}
		if err := dec.Decode(&resp); err != nil {
			t.Fatalf("response: %v; stderr:\n%s", err, stderr.String())
		}
		return resp.Result
	}
	run := map[string]any{"skill": "word-stats", "script": "stats.py", "args": []string{"references/sample.txt"}}
	if res := call(1, "run_skill_script", run); res["isError"] != false {
		t.Errorf("signed skill: %v", res)
	}
	if err := os.WriteFile(filepath.Join(skill, "references", "sample.txt"), []byte("changed after signing\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := call(2, "run_skill_script", run); res["isError"] != true {
		t.Errorf("altered skill ran: %v", res)
	}
	if res := call(3, "run_command", map[string]any{"command": "true"}); res["isError"] != true {
		t.Errorf("run_command ran under --require-signature: %v", res)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server: %v\n%s", err, stderr.String())
	}
	var recs []audit.Record
	for _, line := range strings.Split(stderr.String(), "\n") {
		if isRecordLine(line) {
			recs = append(recs, parseRecord(t, []byte(line)))
		}
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3:\n%s", len(recs), stderr.String())
	}
	if !recs[0].Signature.Required || !recs[0].Signature.Verified || recs[0].Outcome != "exited" {
		t.Errorf("record 1: %+v %s", recs[0].Signature, recs[0].Outcome)
	}
	for i, r := range recs[1:] {
		if r.Outcome != "refused" || r.ErrorKind != audit.KindSignature || r.Signature.Verified {
			t.Errorf("record %d: %s %s %+v", i+2, r.Outcome, r.ErrorKind, r.Signature)
		}
	}
}
