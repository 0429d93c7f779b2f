//go:build linux && (amd64 || arm64)

package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// needLateCgroup skips unless this host's cgroups are v1 in the usual
// layout and writable, where fresh runs join their cgroup late.
func needLateCgroup(t *testing.T, name string) *runCgroup {
	t.Helper()
	cg := planLateCgroup(name, cgroupLimits{MemoryBytes: 64 << 20, Pids: 64})
	if cg == nil {
		t.Skip("needs cgroup v1 in the usual layout (/sys/fs/cgroup/<controller>), writable: root")
	}
	return cg
}

// owner returns the uid owning path.
func owner(t *testing.T, path string) int {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return int(st.Uid)
}

// TestLateCgroupMade: planLateCgroup makes nothing; makeLate makes each
// hierarchy's cgroup with its limit, gives the "tasks" files to the init
// process's identity, tells the init process, and ownTasksBack takes the
// files back; close removes it all.
func TestLateCgroupMade(t *testing.T) {
	name := cgroupName("late-" + newRequestID()[:12])
	cg := needLateCgroup(t, name)
	defer cg.close()
	for _, dir := range cg.dirs {
		if _, err := os.Lstat(dir); err == nil {
			t.Fatalf("%s made by planLateCgroup", dir)
		}
	}
	if got := cg.tasksFiles(); len(got) != len(cg.dirs) || got[0] != filepath.Join(cg.dirs[0], "tasks") {
		t.Fatalf("tasksFiles %v for %v", got, cg.dirs)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := cg.makeLate(cgroupLimits{MemoryBytes: 64 << 20, Pids: 64}, w, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	word := make([]byte, 1)
	if _, err := r.Read(word); err != nil || word[0] != stageconfig.CgroupByte {
		t.Fatalf("the init process was told %q, %v; want %q", word, err, stageconfig.CgroupByte)
	}
	for i, dir := range cg.dirs {
		if cg.ctrls[i] == "pids" {
			if b, err := os.ReadFile(filepath.Join(dir, "pids.max")); err != nil || strings.TrimSpace(string(b)) != "64" {
				t.Errorf("pids.max %q, %v; want 64", b, err)
			}
		}
		if got := owner(t, filepath.Join(dir, "tasks")); got != 65534 {
			t.Errorf("%s/tasks belongs to %d, want the init process's 65534", dir, got)
		}
	}
	cg.ownTasksBack()
	for _, dir := range cg.dirs {
		if got := owner(t, filepath.Join(dir, "tasks")); got != 0 {
			t.Errorf("%s/tasks belongs to %d after ownTasksBack, want root", dir, got)
		}
	}
	dirs := cg.dirs
	cg.close()
	for _, dir := range dirs {
		if _, err := os.Lstat(dir); err == nil {
			t.Errorf("%s left after close", dir)
		}
	}
}

// TestLateCgroupNotMade: when a cgroup cannot be made after all (here its
// name taken meanwhile), makeLate says why and tells the init process
// something other than CgroupByte, which ends its start.
func TestLateCgroupNotMade(t *testing.T) {
	name := cgroupName("late-" + newRequestID()[:12])
	cg := needLateCgroup(t, name)
	defer cg.close()
	if err := os.Mkdir(cg.dirs[0], 0o755); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	err = cg.makeLate(cgroupLimits{MemoryBytes: 64 << 20, Pids: 64}, w, 65534, 65534)
	if err == nil || !strings.Contains(err.Error(), "creating a cgroup") {
		t.Fatalf("makeLate: %v, want the mkdir's failure", err)
	}
	word := make([]byte, 1)
	if _, err := r.Read(word); err != nil || word[0] == stageconfig.CgroupByte {
		t.Fatalf("the init process was told %q, %v; want anything but %q", word, err, stageconfig.CgroupByte)
	}
}

// TestLateCgroupJoined: a fresh run's script is in the run's cgroups,
// which its init process joined after the clone; while it runs, their
// "tasks" files are root's again; after it, they are gone.
func TestLateCgroupJoined(t *testing.T) {
	id := "late-" + newRequestID()[:12]
	needLateCgroup(t, cgroupName(id))
	dir := newSkill(t, map[string]string{"cg.sh": "cat /proc/self/cgroup\nsleep 0.5\n"})
	// Watched from another goroutine while the run goes on here: the
	// "tasks" files that hold the script, and who owns them then.
	parents := cgroupParents(t)
	stop := make(chan struct{})
	watched := make(chan map[string]int, 1)
	go func() {
		seen := map[string]int{}
		for len(seen) == 0 {
			select {
			case <-stop:
				watched <- seen
				return
			case <-time.After(10 * time.Millisecond):
			}
			for _, p := range parents {
				tasks := filepath.Join(p, cgroupName(id), "tasks")
				var st unix.Stat_t
				if b, err := os.ReadFile(tasks); err == nil && len(strings.Fields(string(b))) > 1 && unix.Stat(tasks, &st) == nil {
					seen[tasks] = int(st.Uid)
				}
			}
		}
		watched <- seen
	}()
	o := runIn(t, Sandbox{RequestID: id}, dir, "cg.sh")
	close(stop)
	seen := <-watched
	for tasks, uid := range seen {
		if uid != 0 {
			t.Errorf("%s belonged to %d while the script ran, want root", tasks, uid)
		}
	}
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	if len(seen) == 0 {
		t.Fatal("the run's cgroup never held the script")
	}
	if !stageconfig.Has(o.res.Applied, LayerCgroup) {
		t.Fatalf("cgroup not applied: %+v", o.res.Missing)
	}
	for _, c := range []string{"memory", "pids"} {
		found := false
		for _, line := range strings.Split(o.stdout, "\n") {
			if f := strings.SplitN(line, ":", 3); len(f) == 3 && strings.Contains(","+f[1]+",", ","+c+",") {
				found = strings.HasSuffix(f[2], "/"+cgroupName(id))
			}
		}
		if !found {
			t.Errorf("the script is not in the run's %s cgroup:\n%s", c, o.stdout)
		}
	}
	if left := cgroupLeftovers(t, cgroupName(id)); len(left) > 0 {
		t.Errorf("cgroup left behind: %v", left)
	}
}
