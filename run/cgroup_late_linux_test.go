//go:build linux && (amd64 || arm64)

package run

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// needLateCgroup skips unless this host's cgroups are v1 in the usual
// layout and writable, where the runs of an init process with the
// caller's identity join their cgroup late.
func needLateCgroup(t *testing.T, name string) *cgroup.Cgroup {
	t.Helper()
	cg := cgroup.PlanLate(name, cgroup.Limits{MemoryBytes: 64 << 20, Pids: 64}, nobodyUID)
	if cg == nil {
		t.Skip("needs cgroup v1 in the usual layout (/sys/fs/cgroup/<controller>), writable: root")
	}
	return cg
}

// TestLateCgroupJoined: a root caller's run (its init process nobody on
// the host) joins its cgroup late, through the descriptors: the script is
// in the run's cgroups, whose "tasks" files stay root's throughout, and
// nothing is left after it.
func TestLateCgroupJoined(t *testing.T) {
	id := "late-" + newRequestID()[:12]
	needLateCgroup(t, cgroup.Name(id))
	dir := newSkill(t, map[string]string{"cg.sh": "cat /proc/self/cgroup\nsleep 0.3\n"})
	parents := cgroupParents(t)
	stop := make(chan struct{})
	watched := make(chan map[string]int, 1)
	go func() {
		seen := map[string]int{}
		for {
			select {
			case <-stop:
				watched <- seen
				return
			case <-time.After(5 * time.Millisecond):
			}
			for _, p := range parents {
				tasks := filepath.Join(p, cgroup.Name(id), "tasks")
				var st unix.Stat_t
				if unix.Stat(tasks, &st) == nil {
					seen[tasks] = int(st.Uid)
				}
			}
		}
	}()
	o := runIn(t, Sandbox{RequestID: id}, dir, "cg.sh")
	close(stop)
	seen := <-watched
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	if len(seen) == 0 {
		t.Fatal("the run's cgroup was never seen")
	}
	for tasks, uid := range seen {
		if uid != os.Geteuid() {
			t.Errorf("%s belonged to %d during the run, want the caller's %d", tasks, uid, os.Geteuid())
		}
	}
	checkInRunCgroup(t, o, id)
	if left := cgroupLeftovers(t, cgroup.Name(id)); len(left) > 0 {
		t.Errorf("cgroup left behind: %v", left)
	}
}

// delegatedEnv names, for TestLateCgroupAsCaller, the memory and pids
// cgroups TestLateCgroupDelegated made for it.
const delegatedEnv = "SKILL_SANDBOX_TEST_DELEGATED"

// TestLateCgroupDelegated runs TestLateCgroupAsCaller as nobody inside
// memory and pids cgroups delegated to nobody (the folder and its files
// theirs), where nobody's runs join their cgroup late.
func TestLateCgroupDelegated(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to delegate cgroups to another user")
	}
	name := "ss-delegated-" + newRequestID()[:12]
	own := needLateCgroup(t, name)
	var dirs []string
	defer func() {
		for _, d := range dirs {
			os.Remove(d)
		}
	}()
	// Placed without a CPU limit: the memory and pids cgroups.
	for _, tasks := range own.TasksFiles() {
		d := filepath.Dir(tasks)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
		for _, p := range []string{d, filepath.Join(d, "tasks"), filepath.Join(d, "cgroup.procs")} {
			if err := os.Chown(p, nobodyUID, nobodyUID); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, err := rerunSuite("^TestLateCgroupAsCaller$", []string{delegatedEnv + "=" + strings.Join(dirs, ":")},
		&syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID, Groups: []uint32{}}})
	t.Logf("as uid %d in %v:\n%s", nobodyUID, dirs, out)
	if err != nil {
		t.Fatalf("as the delegated user: %v", err)
	}
	if !strings.Contains(out, "--- PASS: TestLateCgroupAsCaller") && !strings.Contains(out, "PASS") {
		t.Fatal("TestLateCgroupAsCaller did not pass")
	}
}

// TestLateCgroupAsCaller (run by TestLateCgroupDelegated) moves itself
// into the delegated cgroups, then checks that a run there is placed late
// and that its script is inside the run's cgroups, made while its init
// process built the sandbox, which leaves nothing behind.
func TestLateCgroupAsCaller(t *testing.T) {
	env := os.Getenv(delegatedEnv)
	if env == "" {
		t.Skip("run by TestLateCgroupDelegated")
	}
	for _, d := range strings.Split(env, ":") {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			t.Fatal(err)
		}
	}
	id := "late-" + newRequestID()[:12]
	if cgroup.PlanLate(cgroup.Name(id), cgroup.Limits{MemoryBytes: 64 << 20, Pids: 64}, os.Geteuid()) == nil {
		t.Fatal("no late cgroup for the delegated user")
	}
	// Its descriptors could move only its own tasks: an init process of
	// another identity is born inside instead.
	if cgroup.HostRoot() || cgroup.PlanLate(cgroup.Name(id), cgroup.Limits{MemoryBytes: 64 << 20, Pids: 64}, os.Geteuid()+1) != nil {
		t.Fatal("a late cgroup placed for another identity without the host's root")
	}
	dir := newSkill(t, map[string]string{"cg.sh": "cat /proc/self/cgroup\n"})
	o := runIn(t, Sandbox{RequestID: id}, dir, "cg.sh")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	checkInRunCgroup(t, o, id)
	for _, d := range strings.Split(env, ":") {
		if _, err := os.Stat(filepath.Join(d, cgroup.Name(id))); err == nil {
			t.Errorf("the run's cgroup left in %s", d)
		}
	}
}

// checkInRunCgroup checks that run o of request id applied the cgroup
// layer and that its script, which printed /proc/self/cgroup, was in the
// run's memory and pids cgroups.
func checkInRunCgroup(t *testing.T, o outcome, id string) {
	t.Helper()
	if !stageconfig.Has(o.res.Applied, LayerCgroup) {
		t.Fatalf("cgroup not applied: %+v", o.res.Missing)
	}
	for _, c := range []string{"memory", "pids"} {
		found := false
		for _, line := range strings.Split(o.stdout, "\n") {
			if f := strings.SplitN(line, ":", 3); len(f) == 3 && strings.Contains(","+f[1]+",", ","+c+",") {
				found = strings.HasSuffix(f[2], "/"+cgroup.Name(id))
			}
		}
		if !found {
			t.Errorf("the script is not in the run's %s cgroup:\n%s", c, o.stdout)
		}
	}
}
