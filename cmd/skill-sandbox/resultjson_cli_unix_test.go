//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestResultJSONAttacks: the result file is written by skill-sandbox,
// which may be root, with text the script chose (its stdout): a
// --result-json path inside a write grant is refused before the run (the
// script could plant a link there), and a symlink or FIFO found at the
// path is refused, never followed (the target keeps its content) or
// blocked on.
func TestResultJSONAttacks(t *testing.T) {
	skill := newSkill(t, map[string]string{"scripts/hi.sh": "echo PLANTED\n"})
	requireSandbox(t, skill)
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	grant := filepath.Join(dir, "out")
	if err := os.Mkdir(grant, 0o755); err != nil {
		t.Fatal(err)
	}
	// The grant named through a link, the file in a folder still to be
	// made: a run sharing the grant could make that folder a symlink to
	// any folder of the host while this one runs (it is not this run's
	// to remove) and have the file written there.
	grantLink := filepath.Join(dir, "out-link")
	if err := os.Symlink(grant, grantLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"symlink", []string{"run", "--result-json", link, skill, "hi.sh"}, "result file"},
		{"fifo", []string{"run", "--result-json", fifo, skill, "hi.sh"}, "result file"},
		{"inside a write grant", []string{"run", "--write", grant, "--result-json", filepath.Join(grant, "r.json"), skill, "hi.sh"}, "--result-json"},
		{"in a folder to be made in a linked grant", []string{"run", "--write", grantLink, "--result-json", filepath.Join(grantLink, "later", "r.json"), skill, "hi.sh"}, "lies inside the write grant"},
		{"in a folder to be made in a grant, named through a link", []string{"run", "--write", grant, "--result-json", filepath.Join(grantLink, "later", "deeper", "r.json"), skill, "hi.sh"}, "lies inside the write grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", tc.args...)
			if r.Code == 0 || !strings.Contains(r.Stderr, tc.want) {
				t.Errorf("exit %d, stderr %s; want a failure naming %q", r.Code, r.Stderr, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(target); string(b) != "precious\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(grant, "r.json")); err == nil {
		t.Errorf("a result file was written inside the write grant")
	}
	// The refusal's record is not lost: it goes to stderr.
	r := runCLI(t, "", "run", "--write", grant, "--result-json", filepath.Join(grant, "r.json"), skill, "hi.sh")
	if !isRecordLine(lastLine(r.Stderr)) {
		t.Errorf("no record of the refusal on stderr: %s", r.Stderr)
	}
}
