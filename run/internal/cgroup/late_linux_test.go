package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// nobody is the host uid of a root caller's init process, for which a
// late cgroup is placed only when this process is the host's root.
const nobody = 65534

// needLateCgroup skips unless this host's cgroups are v1 in the usual
// layout and writable, where the runs of an init process with the
// caller's identity join their cgroup late.
func needLateCgroup(t *testing.T, name string) *Cgroup {
	t.Helper()
	cg := PlanLate(name, Limits{MemoryBytes: 64 << 20, Pids: 64}, nobody)
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

// configPair is a config socket as LateChannel makes it for a cgroup
// joined late: the supervisor's end, and the init process's.
func configPair(t *testing.T) (sup, initEnd *os.File) {
	t.Helper()
	sup, initEnd, err := LateChannel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sup.Close(); initEnd.Close() })
	return sup, initEnd
}

// received reads what MakeLate sent: the byte and the descriptors.
func received(t *testing.T, initEnd *os.File, n int) (byte, []int) {
	t.Helper()
	word := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*n))
	_, oobn, _, _, err := unix.Recvmsg(int(initEnd.Fd()), word, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	var fds []int
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, got...)
	}
	t.Cleanup(func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	})
	return word[0], fds
}

// TestLateCgroupMade: PlanLate makes nothing; MakeLate makes each
// hierarchy's cgroup with its limit, leaves its files to the caller, and
// sends the init process the word with a descriptor of each "tasks"
// file; close removes it all.
func TestLateCgroupMade(t *testing.T) {
	name := Name("late-" + random.ID()[:12])
	cg := needLateCgroup(t, name)
	defer cg.Close()
	for _, dir := range cg.dirs {
		if _, err := os.Lstat(dir); err == nil {
			t.Fatalf("%s made by PlanLate", dir)
		}
	}
	if got := cg.TasksFiles(); len(got) != len(cg.dirs) || got[0] != filepath.Join(cg.dirs[0], "tasks") {
		t.Fatalf("tasksFiles %v for %v", got, cg.dirs)
	}
	sup, initEnd := configPair(t)
	if err := cg.MakeLate(Limits{MemoryBytes: 64 << 20, Pids: 64}, sup); err != nil {
		t.Fatal(err)
	}
	word, fds := received(t, initEnd, len(cg.dirs))
	if word != stageconfig.CgroupByte || len(fds) != len(cg.dirs) {
		t.Fatalf("the init process was sent %q and %d descriptors; want %q and %d", word, len(fds), stageconfig.CgroupByte, len(cg.dirs))
	}
	for i, dir := range cg.dirs {
		var sent, want unix.Stat_t
		if unix.Fstat(fds[i], &sent) != nil || unix.Stat(filepath.Join(dir, "tasks"), &want) != nil || sent.Ino != want.Ino || sent.Dev != want.Dev {
			t.Errorf("descriptor %d is not %s/tasks", i, dir)
		}
		if cg.ctrls[i] == "pids" {
			if b, err := os.ReadFile(filepath.Join(dir, "pids.max")); err != nil || strings.TrimSpace(string(b)) != "64" {
				t.Errorf("pids.max %q, %v; want 64", b, err)
			}
		}
		if got := owner(t, filepath.Join(dir, "tasks")); got != os.Geteuid() {
			t.Errorf("%s/tasks belongs to %d, want the caller's %d", dir, got, os.Geteuid())
		}
	}
	dirs := cg.dirs
	cg.Close()
	for _, dir := range dirs {
		if _, err := os.Lstat(dir); err == nil {
			t.Errorf("%s left after close", dir)
		}
	}
}

// TestLateCgroupNotMade: when a cgroup cannot be made after all (here its
// name taken meanwhile), MakeLate says why and sends the init process a
// zero byte and no descriptor, which ends its start.
func TestLateCgroupNotMade(t *testing.T) {
	name := Name("late-" + random.ID()[:12])
	cg := needLateCgroup(t, name)
	defer cg.Close()
	if err := os.Mkdir(cg.dirs[0], 0o755); err != nil {
		t.Fatal(err)
	}
	sup, initEnd := configPair(t)
	err := cg.MakeLate(Limits{MemoryBytes: 64 << 20, Pids: 64}, sup)
	if err == nil || !strings.Contains(err.Error(), "creating a cgroup") {
		t.Fatalf("MakeLate: %v, want the mkdir's failure", err)
	}
	if word, fds := received(t, initEnd, len(cg.dirs)); word == stageconfig.CgroupByte || len(fds) != 0 {
		t.Fatalf("the init process was sent %q and %d descriptors; want anything but %q, and none", word, len(fds), stageconfig.CgroupByte)
	}
}
