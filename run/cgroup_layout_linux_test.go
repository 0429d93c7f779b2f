package run

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUsualV1MountsMatchesMountinfo checks, on a host whose v1 hierarchies
// are mounted the usual way, that the placement found without mountinfo
// is the one mountinfo gives, for every controller a run may need.
func TestUsualV1MountsMatchesMountinfo(t *testing.T) {
	own, err := ownCgroups(procCgroup)
	if err != nil {
		t.Fatal(err)
	}
	ctrls := v1Controllers(cgroupLimits{CPUs: 1})
	usual, ok := usualV1Mounts(v1MountRoot, procCgroupNS, own, ctrls)
	if !ok {
		t.Skip("the cgroup v1 hierarchies are not mounted the usual way here (or this is cgroup v2, or a cgroup namespace)")
	}
	mounts, err := cgroupMounts(procMountinfo)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ctrls {
		m, found := mounts[c]
		if !found {
			t.Fatalf("mountinfo has no %s hierarchy, the usual layout found %+v", c, usual[c])
		}
		want, err := m.hostDir(own[c])
		if err != nil {
			t.Fatal(err)
		}
		got, err := usual[c].hostDir(own[c])
		if err != nil {
			t.Fatal(err)
		}
		// The same folder, whatever the path: /sys/fs/cgroup/cpu may be a
		// symlink to cpu,cpuacct.
		if gi, err1 := os.Stat(got); err1 != nil {
			t.Errorf("%s: %v", c, err1)
		} else if wi, err2 := os.Stat(want); err2 != nil || !os.SameFile(gi, wi) {
			t.Errorf("%s: the usual layout gives %s, mountinfo %s", c, got, want)
		}
	}
}

// TestUsualV1MountsRefuses checks each condition of the usual layout:
// any that fails leaves the placement to mountinfo.
func TestUsualV1MountsRefuses(t *testing.T) {
	dir := t.TempDir()
	initial := filepath.Join(dir, "ns-initial")
	other := filepath.Join(dir, "ns-other")
	if err := os.Symlink(initialCgroupNS, initial); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("cgroup:[4026532999]", other); err != nil {
		t.Fatal(err)
	}
	own := map[string]string{"memory": "/a", "pids": "/"}
	ctrls := []string{"memory", "pids"}
	// A plain folder with the right names and files, on no cgroup file
	// system.
	for _, p := range []string{"memory/a", "pids"} {
		if err := os.MkdirAll(filepath.Join(dir, "fake", p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"memory/release_agent", "pids/release_agent"} {
		if err := os.WriteFile(filepath.Join(dir, "fake", p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, root, ns string
		own            map[string]string
	}{
		{"not a cgroup file system", filepath.Join(dir, "fake"), initial, own},
		{"another cgroup namespace", v1MountRoot, other, own},
		{"no namespace link", v1MountRoot, filepath.Join(dir, "missing"), own},
		{"a controller not in /proc/self/cgroup", v1MountRoot, initial, map[string]string{"memory": "/"}},
		{"a relative cgroup path", v1MountRoot, initial, map[string]string{"memory": "a", "pids": "/"}},
		{"an own cgroup that is not there", v1MountRoot, initial, map[string]string{"memory": "/skill-sandbox-no-such-cgroup", "pids": "/skill-sandbox-no-such-cgroup"}},
	}
	for _, tc := range tests {
		if m, ok := usualV1Mounts(tc.root, tc.ns, tc.own, ctrls); ok {
			t.Errorf("%s: usualV1Mounts = %+v, want a refusal", tc.name, m)
		}
	}
}
