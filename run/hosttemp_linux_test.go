package run

import (
	"context"
	"errors"
	"github.com/skill-sandbox/skill-sandbox/run/internal/workdir"
	"os"
	"strings"
	"testing"
)

// TestRunWithTmpdirInSandboxTree: with TMPDIR in a tree of which the
// sandbox has its own copy (/dev/shm), a run still starts, with its work
// folder under /tmp: under /dev/shm the work folder's path did not exist
// in the sandbox, and every run was refused (landlock rule ... ENOENT).
func TestRunWithTmpdirInSandboxTree(t *testing.T) {
	if st, err := os.Stat("/dev/shm"); err != nil || !st.IsDir() {
		t.Skip("no /dev/shm folder on this host")
	}
	if !workdir.TmpIsFolder() {
		t.Skip("no /tmp folder on this host")
	}
	dir := newSkill(t, map[string]string{"pwd.sh": "#!/bin/sh\npwd\n"})
	t.Setenv("TMPDIR", "/dev/shm")
	if got := workdir.HostTemp(); got != "/tmp" {
		t.Errorf("workdir.HostTemp() with TMPDIR=/dev/shm = %s, want /tmp", got)
	}
	for _, keep := range []bool{false, true} { // a work folder made at once, and one made by the init process
		sb := &Sandbox{SkillDir: dir, UseWorkDir: true, KeepWorkDir: keep}
		res, err := sb.Run(context.Background(), "pwd.sh", nil)
		if errors.Is(err, ErrUnsupported) {
			t.Skipf("no sandbox here: %v", err)
		}
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("keep %v: %v (exit %d, stderr %s)", keep, err, res.ExitCode, res.Stderr.Captured)
		}
		if out := string(res.Stdout.Captured); strings.HasPrefix(out, "/dev/") {
			t.Errorf("keep %v: the work folder is %s", keep, out)
		}
		if keep && res.WorkDir != "" {
			os.RemoveAll(res.WorkDir)
		}
	}
}
