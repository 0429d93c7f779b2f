package run

import (
	"context"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/native"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// needCgroup skips the test when no per-run cgroup can be had here, with
// the reason.
func needCgroup(t *testing.T) {
	t.Helper()
	if err := openCgroupProbe(); err != nil {
		t.Skipf("no per-run cgroup here (needs root, or a delegated cgroup v2 subtree): %v", err)
	}
}

// openCgroupProbe creates and removes a small cgroup, to tell whether runs
// here get one.
func openCgroupProbe() error {
	cg, err := cgroup.Open(cgroup.Name(""), cgroup.Limits{MemoryBytes: 64 << 20, Pids: 64})
	if err != nil {
		return err
	}
	cg.Close()
	return nil
}

// heldAcrossProcesses forks four children that each touch 100 MiB and hold
// it for a second, together 400 MiB: each fits under RLIMIT_AS 256 MiB,
// the total does not fit the cgroup's 256 + 16 MiB.
const heldAcrossProcesses = `import os, time
N, MB = 4, 100
kids = []
for i in range(N):
    pid = os.fork()
    if pid == 0:
        b = bytearray(MB << 20)
        for j in range(0, len(b), 4096):
            b[j] = 1
        time.sleep(1)
        os._exit(0)
    kids.append(pid)
ok = 0
for pid in kids:
    _, st = os.waitpid(pid, 0)
    if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0:
        ok += 1
    else:
        print("child", pid, "wait status", st)
if ok == N:
    print("all held", N * MB, "MiB")
`

// heldInMemfds writes 600 MiB into three memfds: memfd pages are not in
// any process's address space, so RLIMIT_AS never sees them.
const heldInMemfds = `import os
chunk = b"x" * (1 << 20)
total = 0
fds = []
try:
    for i in range(3):
        fd = os.memfd_create("m%d" % i)
        fds.append(fd)
        for j in range(200):
            os.write(fd, chunk)
            total += 1
except OSError as e:
    print("stopped at", total, "MiB:", e)
if total == 600:
    print("all held", total, "MiB")
`

// forkMany forks 300 sleeping children.
const forkMany = `import os, time
n = 0
try:
    for i in range(300):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError as e:
    print("fork failed after", n, e)
else:
    print("forked", n)
`

func cgroupAttacks() []attack {
	mem := Sandbox{MemoryMB: 256, WorkDirMB: 16}
	return []attack{
		// Without the cgroup the watch (TestWatchAttacks) and the seccomp
		// filter (no memfd_create) take over: off here too.
		{layer: LayerCgroup, name: "400 MiB held by 4 processes under 256 MiB", also: []Layer{LayerWatch}, sb: mem, script: heldAcrossProcesses, setup: printed("all held")},
		{layer: LayerCgroup, name: "600 MiB held in memfds under 256 MiB", also: []Layer{LayerSeccomp}, sb: mem, script: heldInMemfds, setup: printed("all held")},
		{
			// RLIMIT_NPROC would stop it too; pids.max is the backstop
			// where RLIMIT_NPROC is per host user (no user namespace).
			layer: LayerCgroup, name: "300 processes under MaxProcs 20",
			also: []Layer{LayerRlimits}, sb: Sandbox{MaxProcs: 20}, script: forkMany, setup: printed("forked 300"),
		},
	}
}

// TestCgroupAttacks shows each cgroup limit stopping what the rlimits let
// through, and that disabling the cgroup lets it through.
func TestCgroupAttacks(t *testing.T) {
	fullIsolation(t)
	needCgroup(t)
	for _, a := range cgroupAttacks() {
		t.Run(a.name, func(t *testing.T) { runAttack(t, a) })
	}
}

// TestCgroupAccounting checks the peak memory, the OOM kill count, the
// relaxed RLIMIT_AS and that the cgroup is gone after the run.
func TestCgroupAccounting(t *testing.T) {
	needTool(t, "python3")
	needCgroup(t)
	dir := newSkill(t, map[string]string{
		"touch.py": "b = bytearray(64 << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\nprint('ok')\n",
		"held.py":  heldAcrossProcesses,
	})
	id := "cgtest-" + newRequestID()[:12]
	o := runIn(t, Sandbox{RequestID: id}, dir, "touch.py")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	if !stageconfig.Has(o.res.Applied, LayerCgroup) {
		t.Fatalf("cgroup not applied: %+v", o.res.Missing)
	}
	if o.res.PeakMemoryKB < 64<<10 || o.res.PeakMemoryKB > (DefaultMemoryMB+DefaultWorkDirMB)<<10 {
		t.Errorf("PeakMemoryKB %d, want between 64 MiB and the limit", o.res.PeakMemoryKB)
	}
	if want := DefaultMemoryMB + native.AddressReserveMB; o.res.AddressSpaceMB != want {
		t.Errorf("AddressSpaceMB %d under the cgroup, want the relaxed %d", o.res.AddressSpaceMB, want)
	}
	if left := cgroupLeftovers(t, "skill-sandbox-"+id); len(left) > 0 {
		t.Errorf("cgroup left behind: %v", left)
	}
	o = runIn(t, Sandbox{MemoryMB: 256, WorkDirMB: 16}, dir, "held.py")
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.res.OOMKills == 0 || strings.Contains(o.stdout, "all held") {
		t.Errorf("OOMKills %d stdout %q: want the cgroup to kill a child", o.res.OOMKills, o.stdout)
	}
	// Without the cgroup the watch holds the memory, and RLIMIT_AS is as
	// relaxed; without either, RLIMIT_AS is all there is.
	o = runIn(t, Sandbox{Disable: []Layer{LayerCgroup}}, dir, "touch.py")
	if o.res.PeakMemoryKB != 0 || o.res.AddressSpaceMB != DefaultMemoryMB+native.AddressReserveMB {
		t.Errorf("without the cgroup: PeakMemoryKB %d AddressSpaceMB %d, want 0 and %d", o.res.PeakMemoryKB, o.res.AddressSpaceMB, DefaultMemoryMB+native.AddressReserveMB)
	}
	o = runIn(t, Sandbox{Disable: []Layer{LayerCgroup, LayerWatch}}, dir, "touch.py")
	if o.res.AddressSpaceMB != DefaultMemoryMB {
		t.Errorf("without the cgroup and the watch: AddressSpaceMB %d, want %d", o.res.AddressSpaceMB, DefaultMemoryMB)
	}
}

// cgroupLeftovers lists folders named name where this process's runs
// create their cgroups.
func cgroupLeftovers(t *testing.T, name string) []string {
	t.Helper()
	var left []string
	for _, p := range cgroupParents(t) {
		if _, err := os.Stat(filepath.Join(p, name)); err == nil {
			left = append(left, filepath.Join(p, name))
		}
	}
	return left
}

// cgroupParents lists the folders a run's cgroup is made in: this
// process's cgroup in each mounted hierarchy, and its parent.
func cgroupParents(t *testing.T) []string {
	t.Helper()
	homes, err := cgroup.Homes()
	if err != nil {
		t.Fatal(err)
	}
	var parents []string
	for _, d := range homes {
		parents = append(parents, d, filepath.Dir(d))
	}
	return parents
}

// TestOOMPrefersTheScript checks that the script starts with the highest
// oom_score_adj and the init process, which reaps (PID 1 of the run's PID
// namespace), with 0, so that a cgroup OOM kill takes the script and not
// the run's init process.
func TestOOMPrefersTheScript(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"oom.py": `import os
print("script", open("/proc/self/oom_score_adj").read().strip())
print("reaper", open("/proc/1/oom_score_adj").read().strip(), flush=True)
pid = os.fork()
if pid == 0:
    print("child", open("/proc/self/oom_score_adj").read().strip(), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
`})
	o := runIn(t, Sandbox{}, dir, "oom.py")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	if !stageconfig.Has(o.res.Applied, LayerPIDNS) {
		t.Skip("no PID namespace, hence no reaper, here")
	}
	for _, want := range []string{"script 1000", "reaper 0", "child 1000"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("stdout %q lacks %q", o.stdout, want)
		}
	}
}

// TestConcurrentCgroupsNotNested runs several sandboxes at once and checks
// that no run's cgroup was made inside another's: /proc/self/cgroup shows
// the thread group leader's cgroups, and the leader may be the thread a
// concurrent start had moved into its run's cgroup (startInside now never
// moves that thread). Such a nested cgroup keeps both from being removed.
func TestConcurrentCgroupsNotNested(t *testing.T) {
	needCgroup(t)
	dir := newSkill(t, map[string]string{"t.sh": "#!/bin/sh\nexit 0\n"})
	prefix := "nest-" + newRequestID()[:8]
	const workers, runs = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*runs)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range runs {
				sb := Sandbox{SkillDir: dir, RequestID: fmt.Sprintf("%s-%d-%d", prefix, w, i), Stdout: io.Discard, Stderr: io.Discard, AllowDegraded: degradedRerun()}
				res, err := sb.Run(context.Background(), "t.sh", nil)
				res.WaitCleanup()
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var left []string
	for _, root := range cgroupParents(t) {
		found, _ := filepath.Glob(filepath.Join(root, "*", cgroup.Prefix+prefix+"*"))
		more, _ := filepath.Glob(filepath.Join(root, cgroup.Prefix+prefix+"*"))
		left = append(left, append(found, more...)...)
	}
	if len(left) > 0 {
		t.Errorf("cgroups left behind (made inside another run's): %v", left)
	}
}

// TestHomeTasksOutOfReach checks that the script cannot use the files the
// init process leaves the cgroup with (stageconfig.HomeTasksFD): not
// through its own descriptors (close-on-exec), not through the init
// process's in /proc/1/fd
// (not dumpable, its memory the supervisor's user namespace's). With them
// it could move itself out of the run's cgroup and its limits.
func TestHomeTasksOutOfReach(t *testing.T) {
	needCgroup(t)
	script := "#!/bin/sh\n"
	for fd := stageconfig.HomeTasksFD; fd < stageconfig.HomeTasksFD+stageconfig.HomeTasksSlots; fd++ {
		script += fmt.Sprintf("(echo 0 >&%d) 2>/dev/null && echo moved-by-fd-%d\n", fd, fd)
		script += fmt.Sprintf("(echo 0 > /proc/1/fd/%d) 2>/dev/null && echo moved-by-proc-%d\n", fd, fd)
	}
	script += "cat /proc/self/cgroup\n"
	dir := newSkill(t, map[string]string{"escape.sh": script})
	// Also with the layers that could otherwise be what stops it off:
	// the init process's not being dumpable must hold alone.
	for _, disable := range [][]Layer{nil, {LayerSeccomp, LayerLandlockFS, LayerLandlockScope, LayerCaps, LayerNoNewPrivs}} {
		o := runIn(t, Sandbox{RequestID: "home-" + newRequestID()[:12], Disable: disable}, dir, "escape.sh")
		if o.err != nil || !stageconfig.Has(o.res.Applied, LayerCgroup) {
			t.Fatalf("disabled %v: err %v applied %v: want a run in a cgroup\nstderr: %s", disable, o.err, o.res.Applied, o.stderr)
		}
		if strings.Contains(o.stdout, "moved-by") {
			t.Errorf("disabled %v: the script wrote to a home tasks file:\n%s", disable, o.stdout)
		}
		for _, line := range strings.Split(strings.TrimSpace(o.stdout), "\n") {
			// Under cgroup v1 without a cgroup namespace the script sees
			// the host's paths; its memory and pids cgroups must be the
			// run's.
			if f := strings.SplitN(line, ":", 3); len(f) == 3 && (strings.Contains(f[1], "memory") || strings.Contains(f[1], "pids")) && !strings.Contains(f[2], cgroup.Prefix) {
				t.Errorf("disabled %v: the script is outside the run's cgroup: %s", disable, line)
			}
		}
	}
}
