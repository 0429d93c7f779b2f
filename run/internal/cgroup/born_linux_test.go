package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBornInCgroup checks that StartInside starts a process inside the
// run's v1 cgroups (not moved there afterwards) and leaves none of this
// process's threads in them.
func TestBornInCgroup(t *testing.T) {
	needCgroup(t)
	cg, err := Open(Name(""), Limits{MemoryBytes: 64 << 20, Pids: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	var cmd *exec.Cmd
	inside, err := cg.StartInside(func() error {
		cmd = exec.Command("/bin/sleep", "10")
		return cmd.Start()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if cg.version != 1 {
		if inside {
			t.Errorf("inside reported for a cgroup v%d", cg.version)
		}
		t.Skipf("cgroup v%d: processes are moved, not born inside", cg.version)
	}
	if !inside {
		t.Fatalf("inside %v: want the process born inside", inside)
	}
	child, err := readOwn(fmt.Sprintf("/proc/%d/cgroup", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cg.ctrls {
		want := strings.TrimSuffix(cg.from[i], "/") + "/" + filepath.Base(cg.dirs[i])
		if child[c] != want {
			t.Errorf("child's %s cgroup %q, want %q", c, child[c], want)
		}
	}
	// The starting thread moves back after handing the process over;
	// close and removeEmpty wait for that (waitBack), and so does this.
	cg.waitBack()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		own, err := readOwn("/proc/self/task/" + task.Name() + "/cgroup")
		if err != nil {
			continue // the thread ended meanwhile
		}
		for i, c := range cg.ctrls {
			if own[c] != cg.from[i] {
				t.Errorf("thread %s left in %s cgroup %q, want %q", task.Name(), c, own[c], cg.from[i])
			}
		}
	}
}
