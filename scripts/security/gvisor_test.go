//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestJudgeP41 checks that the kernel-surface probe calls the host
// kernel's answers the effect, gVisor's answers the wall, and a run of
// the gvisor pass that met the host's kernel the effect.
func TestJudgeP41(t *testing.T) {
	host := hostRelease()
	gv := []step{{"kernel release", "ok", "4.4.0"}, {"kernel log", "ok", "<6>[   0.000000] Starting gVisor..."}}
	hostK := []step{{"kernel release", "ok", host}, {"kernel log", "EPERM", "Operation not permitted"}}
	tests := []struct {
		name, backend string
		steps         []step
		verdict       string
		layer         string
	}{
		{"native refused", "native", append([]step{{"io_uring_setup", "EPERM", ""}}, hostK...), vNone, "seccomp"},
		{"native reached", "native", append([]step{{"io_uring_setup", "ok", "fd"}}, hostK...), vEffect, ""},
		{"gVisor answers itself", "gvisor", append([]step{{"io_uring_setup", "ok", "fd"}, {"userfaultfd", "ENOSYS", ""}}, gv...), vNone, "gvisor"},
		{"gvisor pass met the host kernel", "gvisor", append([]step{{"io_uring_setup", "EPERM", ""}}, hostK...), vEffect, ""},
		{"release alone is no proof", "gvisor", []step{{"io_uring_setup", "EPERM", ""}, {"kernel release", "ok", "4.4.0"}, {"kernel log", "EPERM", ""}}, vEffect, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{cfg: &config{backend: tc.backend}, sandboxed: true}
			j := judgeP41(e, &outcome{steps: tc.steps})
			if j.verdict != tc.verdict || tc.layer != "" && j.layer != tc.layer {
				t.Fatalf("verdict %s layer %q (%s); want %s %q", j.verdict, j.layer, j.evidence, tc.verdict, tc.layer)
			}
		})
	}
}

// TestGVisorSkip checks that the gvisor pass skips, with the reason, a
// run the gvisor backend refused, fails one that ran on another backend,
// and keeps every other.
func TestGVisorSkip(t *testing.T) {
	cfg := &config{backend: "gvisor"}
	tests := []struct {
		name   string
		record map[string]any
		want   string
	}{
		{"ran on gvisor", map[string]any{"started": true, "backend": "gvisor"}, ""},
		{"refused: network", map[string]any{"started": false, "error_kind": "usage", "error": "--backend gvisor does not give a run network access yet"}, "refuses this probe's run: --backend gvisor does not give"},
		{"refused: grants", map[string]any{"started": false, "error_kind": "unsupported", "backend": "gvisor", "error": "cannot yet hand over folders"}, "cannot yet hand over"},
		{"refused by the sandbox: scored", map[string]any{"started": false, "error_kind": "isolation"}, ""},
		{"fell back", map[string]any{"started": true}, "ran on the native backend"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := gvisorSkip(cfg, &outcome{record: tc.record})
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("gvisorSkip = %q, want %q", got, tc.want)
			}
		})
	}
	if got := gvisorSkip(&config{backend: "native"}, &outcome{record: map[string]any{"started": false, "error_kind": "usage"}}); got != "" {
		t.Fatalf("native pass: %q", got)
	}
}

// TestKernelSurfaceOnGVisor runs probe 41 through the runner with
// -backend gvisor where runsc is present (CI installs it): the calls
// must meet gVisor's kernel.
func TestKernelSurfaceOnGVisor(t *testing.T) {
	if _, err := exec.LookPath("runsc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("runsc is missing under CI=true: %v", err)
		}
		t.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "skill-sandbox")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/skill-sandbox").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var stdout, stderr strings.Builder
	code := mainErr([]string{"-bin", bin, "-suite", "security", "-backend", "gvisor", "-only", "41", "-unprivileged=false", "-no-baseline"}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "gVisor's kernel (uname 4.4.0") {
		t.Fatalf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}

// TestKnownGap: only the gvisor backend has known gaps, each for the
// callers it applies to.
func TestKnownGap(t *testing.T) {
	native, gvisor := &config{backend: "native"}, &config{backend: "gvisor"}
	for _, tc := range []struct {
		cfg      *config
		num, uid int
		gap      bool
	}{
		{native, 14, 0, false},
		{gvisor, 13, 0, false}, // the memory watch
		{gvisor, 36, 65534, false},
		{gvisor, 14, 0, false}, // RLIMIT_NPROC, kept by gVisor's kernel
		{gvisor, 14, 65534, false},
		{gvisor, 24, 0, false},
		{gvisor, 24, 65534, false}, // closed: the watches and a sized /tmp
		{gvisor, 1, 65534, false},
	} {
		if got := knownGap(tc.cfg, tc.num, tc.uid); (got != "") != tc.gap {
			t.Errorf("%s probe %d uid %d: %q, want a gap: %v", tc.cfg.backend, tc.num, tc.uid, got, tc.gap)
		}
	}
}

// TestJudgeP13: a memory bomb the run's cgroup or the supervisor's watch
// (the gvisor backend's memory watch) killed before it reported is
// stopped, and the layer says which.
func TestJudgeP13(t *testing.T) {
	tests := []struct {
		name   string
		steps  []step
		record map[string]any
		want   judgement
	}{
		{"MemoryError", []step{{"allocate 2048 MiB", "MemoryError", ""}, {"reached", "ok", "448 MiB"}}, map[string]any{}, judgement{verdict: vNone, layer: "rlimits"}},
		{"cgroup", nil, map[string]any{"signal": "SIGKILL", "oom_kills": 1.0}, judgement{verdict: vNone, layer: "cgroup"}},
		{"watch", nil, map[string]any{"signal": "SIGKILL", "outcome": "resource_limit", "limit_exceeded": "memory"}, judgement{verdict: vNone, layer: "watch"}},
		{"reached", []step{{"allocate 2048 MiB", "ok", "2048 MiB"}, {"reached", "ok", "2048 MiB"}}, map[string]any{}, judgement{verdict: vEffect}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{cfg: &config{backend: "gvisor"}, sandboxed: true}
			j := judgeP13(e, &outcome{steps: tc.steps, record: tc.record, sandboxed: true})
			if j.verdict != tc.want.verdict || j.layer != tc.want.layer {
				t.Fatalf("verdict %s layer %q (%s); want %s %q", j.verdict, j.layer, j.evidence, tc.want.verdict, tc.want.layer)
			}
		})
	}
}
