package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// TestCgroupHalfJoined makes one cgroup v1 hierarchy refuse the init process
// that the others took: the cpu controller (--cpus) refuses a real-time
// process (SCHED_FIFO, from chrt) in a cgroup whose cpu.rt_runtime_us is 0,
// as every new one's is, while memory and pids take it. The cgroup layer is
// all or nothing (docs/security.md): the run goes ahead without it, the
// record naming the refused file and errno, and no run's cgroup is left
// behind; --require-isolation refuses it as an isolation failure. Before,
// removing the half-joined cgroup killed the init process and the run failed
// with "sending config: broken pipe".
func TestCgroupHalfJoined(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the cgroup v1 hierarchies and SCHED_FIFO")
	}
	if _, err := exec.LookPath("chrt"); err != nil {
		t.Skip("needs chrt to start skill-sandbox as a real-time process")
	}
	own := ownCPUCgroup(t)
	rt, err := os.ReadFile(filepath.Join(own, "cpu.rt_runtime_us"))
	if err != nil {
		t.Skipf("needs cgroup v1's cpu controller with real-time group scheduling (%v)", err)
	}
	if n, _ := strconv.Atoi(strings.TrimSpace(string(rt))); n <= 0 {
		t.Skipf("this process's cpu cgroup allows no real-time time (cpu.rt_runtime_us %s)", strings.TrimSpace(string(rt)))
	}
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	cli := func(args ...string) (cliResult, audit.Record) {
		t.Helper()
		cmd := exec.Command("chrt", append([]string{"-f", "1", cliBinary, "audit", "--cpus", "1"}, args...)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		r := cliResult{Stdout: stdout.String(), Stderr: stderr.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.Code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return r, stderrRecord(t, r.Stderr)
	}

	r, rec := cli(skill, "ok.sh", "half")
	if r.Code != 0 || !strings.Contains(r.Stdout, "out half") || rec.ErrorKind != "" {
		t.Fatalf("run without the half-joined cgroup: exit %d, error_kind %q, error %q, stdout %q", r.Code, rec.ErrorKind, rec.Error, r.Stdout)
	}
	if slices.Contains(rec.Layers.Applied, "cgroup") {
		t.Errorf("cgroup reported applied: %v", rec.Layers.Applied)
	}
	var reason string
	for _, m := range rec.Layers.Missing {
		if m.Layer == "cgroup" {
			reason = m.Reason
		}
	}
	if !strings.Contains(reason, "/cpu") || !strings.Contains(reason, "cgroup.procs") || !strings.Contains(reason, "invalid argument") {
		t.Errorf("cgroup missing for %q, want the cpu hierarchy's cgroup.procs and EINVAL", reason)
	}
	name := "skill-sandbox-" + strings.ToLower(rec.RequestID)
	for _, pattern := range []string{"/sys/fs/cgroup/*/" + name + "*", "/sys/fs/cgroup/*/*/" + name + "*", "/sys/fs/cgroup/*/*/*/" + name + "*"} {
		if left, _ := filepath.Glob(pattern); len(left) > 0 {
			t.Errorf("the run's cgroup was left behind: %v", left)
		}
	}

	r, rec = cli("--require-isolation", skill, "ok.sh", "strict")
	if r.Code != 1 || rec.ErrorKind != audit.KindIsolation || !strings.Contains(rec.Error, "cgroup") || strings.Contains(r.Stdout, "out strict") {
		t.Errorf("--require-isolation: exit %d, error_kind %q, error %q, stdout %q; want 1, isolation naming the cgroup, no output", r.Code, rec.ErrorKind, rec.Error, r.Stdout)
	}
}

// ownCPUCgroup returns the folder of this process's cgroup v1 cpu cgroup,
// skipping the test where there is none.
func ownCPUCgroup(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skip(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "cpu") {
			for _, mnt := range []string{"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"} {
				if _, err := os.Stat(filepath.Join(mnt, "cpu.rt_runtime_us")); err == nil {
					return filepath.Join(mnt, parts[2])
				}
			}
		}
	}
	t.Skip("no cgroup v1 cpu hierarchy")
	return ""
}
