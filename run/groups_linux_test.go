package run

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// groupsScript prints the script's supplementary groups as the kernel
// shows them, and the errno of dropping them (0: dropped).
const groupsScript = `import os
for line in open("/proc/self/status"):
    if line.startswith("Groups:"):
        print("groups", line.split()[1:])
try:
    os.setgroups([])
    print("setgroups 0")
except OSError as e:
    print("setgroups", e.errno)
`

// TestSupplementaryGroups checks what happens to the caller's
// supplementary groups. A root caller's sandbox runs as 65534 with none.
// An unprivileged caller's cannot be dropped: the kernel lets an
// unprivileged process write a user namespace's gid_map only once
// setgroups is denied in it, so inside they show as the overflow gid and
// setgroups fails with EPERM. As root, the test re-runs itself as uid 65534
// with groups 4 and 24 to see that case.
func TestSupplementaryGroups(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"groups.py": groupsScript})
	o := runIn(t, Sandbox{}, dir, "groups.py")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	own, err := os.Getgroups()
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case os.Geteuid() == 0:
		if !strings.Contains(o.stdout, "groups []") {
			t.Errorf("a root caller's sandbox has supplementary groups: %q", o.stdout)
		}
		if testing.Short() {
			return
		}
		out, err := rerunSuite("^TestSupplementaryGroups$", nil,
			&syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID, Groups: []uint32{4, 24}}})
		t.Logf("as uid %d with groups 4 and 24:\n%s", nobodyUID, out)
		if err != nil {
			t.Errorf("the unprivileged case failed: %v", err)
		}
	case len(own) == 0:
		t.Skip("this unprivileged caller has no supplementary groups to look at")
	default:
		overflow := strings.TrimSpace(readFileString("/proc/sys/kernel/overflowgid"))
		want := "groups ["
		for i := range own {
			if i > 0 {
				want += ", "
			}
			want += "'" + overflow + "'"
		}
		want += "]"
		if !strings.Contains(o.stdout, want) {
			t.Errorf("inside: %q, want %s (each host group shown as the overflow gid)", o.stdout, want)
		}
		if !strings.Contains(o.stdout, "setgroups 1\n") {
			t.Errorf("setgroups inside: %q, want EPERM (denied in the user namespace)", o.stdout)
		}
	}
}

func readFileString(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
