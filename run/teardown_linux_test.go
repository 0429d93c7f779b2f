package run

import (
	"bytes"
	"context"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/native"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestRunReturnsBeforeTeardown checks that under a PID namespace Run
// returns once the init process has reported, with the result already complete
// (status, output, usage), and leaves the sandbox's teardown to the
// background; and that WaitCleanup then finds the init process reaped, the
// cgroup and the work folder removed, the cgroup under v1 while the init
// process was still exiting (it moved itself out of the cgroup
// before reporting).
func TestRunReturnsBeforeTeardown(t *testing.T) {
	dir := newSkill(t, map[string]string{"x.sh": "#!/bin/sh\necho out\necho err >&2\nexit 3\n"})
	id := "teardown-" + newRequestID()[:12]
	var out, errb bytes.Buffer
	sb := Sandbox{SkillDir: dir, RequestID: id, Stdout: &out, Stderr: &errb, AllowDegraded: degradedRerun()}
	// A TMPDIR of its own, for the work folder: other runs' come and go
	// in the shared one.
	tmp, err := os.MkdirTemp("", "teardown-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil { // the sandbox identity may be nobody
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	workDirs := func() []string {
		m, _ := filepath.Glob(filepath.Join(tmp, "skill-sandbox-run-*"))
		return m
	}
	res, err := sb.Run(context.Background(), "x.sh", nil)
	if err != nil || res.ExitCode != 3 || res.Signal != "" {
		t.Fatalf("err %v exit %d signal %q: want exit 3", err, res.ExitCode, res.Signal)
	}
	if out.String() != "out\n" || errb.String() != "err\n" || string(res.Stdout.Captured) != "out\n" {
		t.Errorf("stdout %q stderr %q captured %q: want all of the output", out.String(), errb.String(), res.Stdout.Captured)
	}
	if res.CPUTime <= 0 || res.MaxRSSKB <= 0 {
		t.Errorf("CPUTime %s MaxRSSKB %d: want the run's usage", res.CPUTime, res.MaxRSSKB)
	}
	if stageconfig.Has(res.Applied, LayerCgroup) && res.PeakMemoryKB <= 0 {
		t.Errorf("PeakMemoryKB %d under the cgroup", res.PeakMemoryKB)
	}
	if stageconfig.Has(res.Applied, LayerPIDNS) && res.cleanup == nil {
		t.Errorf("Run waited for the sandbox's teardown")
	}
	res.WaitCleanup()
	res.WaitCleanup() // a second call returns at once
	if left := cgroupLeftovers(t, cgroup.Name(id)); len(left) > 0 {
		t.Errorf("cgroup left after WaitCleanup: %v", left)
	}
	if v := runCgroupVersion(t); stageconfig.Has(res.Applied, LayerCgroup) && res.cleanup.Wait() != (v == 1) {
		t.Errorf("cgroup v%d: cgroup removed before the init process's exit: %v, want %v", v, res.cleanup.Wait(), v == 1)
	}
	if pids := initStagesOf(id); len(pids) > 0 {
		t.Errorf("init process still there after WaitCleanup: %v", pids)
	}
	if left := workDirs(); len(left) > 0 {
		t.Errorf("work folder left after WaitCleanup: %v", left)
	}
}

// initStagesOf lists the processes named as the run id's init process
// (see native.InitName), zombies included.
func initStagesOf(id string) []int {
	var pids []int
	want := []byte("(" + native.InitName(id) + ")")
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if bytes.Contains(stat, want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// runCgroupVersion is the cgroup version runs get here; 0 without one.
func runCgroupVersion(t *testing.T) int {
	cg, err := cgroup.Open(cgroup.Name(""), cgroup.Limits{MemoryBytes: 64 << 20, Pids: 64})
	if err != nil {
		return 0
	}
	defer cg.Close()
	return cg.Version()
}
