package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestBackendUsageErrors(t *testing.T) {
	skill := newSkill(t, nil)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "docker"}, `--backend must be native or gvisor, got "docker"`},
		{[]string{"--backend", "gvisor", "--allow-host", "example.com"}, "--backend gvisor does not give a run network access yet"},
		{[]string{"--backend", "gvisor", "--allow-network"}, "--backend gvisor does not give a run network access yet"},
	}
	for _, tt := range tests {
		log := filepath.Join(t.TempDir(), "audit.jsonl")
		args := append(append([]string{"run", "--audit-log", log}, tt.args...), skill, "ok.sh")
		r := runCLI(t, "", args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tt.want) || strings.Contains(r.Stdout, "out") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, r.Code, r.Stderr, tt.want)
		}
		if recs := fileRecords(t, log); len(recs) != 1 {
			t.Errorf("%v: %d records, want 1", tt.args, len(recs))
		}
	}
}

func TestBackendGVisorRecord(t *testing.T) {
	if _, err := exec.LookPath("runsc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("runsc is missing under CI=true: %v", err)
		}
		t.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
	skill := newSkill(t, nil)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	r := runCLI(t, "", "run", "--backend", "gvisor", "--audit-log", log, skill, "ok.sh", "a")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "out a\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	recs := fileRecords(t, log)
	if len(recs) != 1 || recs[0].Backend != "gvisor" || !strings.HasPrefix(recs[0].BackendVersion, "runsc version ") {
		t.Fatalf("records %+v, want one with backend gvisor and runsc's version", recs)
	}
	native := filepath.Join(t.TempDir(), "native.jsonl")
	runCLI(t, "", "run", "--audit-log", native, skill, "ok.sh")
	if recs := fileRecords(t, native); len(recs) != 1 || recs[0].Backend != "" {
		t.Fatalf("native records %+v: want no backend field", recs)
	}
}
