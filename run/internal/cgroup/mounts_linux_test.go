package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
)

func TestCgroupParsing(t *testing.T) {
	dir := t.TempDir()
	mi := filepath.Join(dir, "mountinfo")
	os.WriteFile(mi, []byte(`31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 /user.slice /sys/fs/cgroup/with\040space rw,relatime - cgroup2 cgroup2 rw,nsdelegate
`), 0o644)
	m, err := readMounts(mi)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]mount{
		"cpu":     {dir: "/sys/fs/cgroup/cpu,cpuacct", root: "/"},
		"cpuacct": {dir: "/sys/fs/cgroup/cpu,cpuacct", root: "/"},
		"memory":  {dir: "/sys/fs/cgroup/memory", root: "/"},
		"2":       {dir: "/sys/fs/cgroup/with space", root: "/user.slice"},
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("mount %q = %+v, want %+v", k, m[k], v)
		}
	}
	if len(m) != len(want) {
		t.Errorf("mounts %+v, want %d entries", m, len(want))
	}
	pc := filepath.Join(dir, "cgroup")
	os.WriteFile(pc, []byte("4:memory:/a/b\n2:cpu,cpuacct:/\n0::/user.slice/app.slice/x.scope\n"), 0o644)
	own, err := readOwn(pc)
	if err != nil {
		t.Fatal(err)
	}
	if own["memory"] != "/a/b" || own["cpuacct"] != "/" || own[""] != "/user.slice/app.slice/x.scope" {
		t.Errorf("own cgroups %+v", own)
	}
	for _, c := range []struct{ path, want string }{
		{"/user.slice/app.slice/x.scope", "/sys/fs/cgroup/with space/app.slice/x.scope"},
		{"/user.slice", "/sys/fs/cgroup/with space"},
		{"/user.slicex", ""},
		{"/system.slice", ""},
	} {
		got, err := want["2"].hostDir(c.path)
		if (err != nil) != (c.want == "") || got != c.want && c.want != "" {
			t.Errorf("hostDir(%q) = %q, %v; want %q", c.path, got, err, c.want)
		}
	}
	for _, c := range []struct{ id, want string }{
		{"0123abcd", "skill-sandbox-0123abcd"},
		{"Req-42_x", "skill-sandbox-req-42_x"},
	} {
		if got := Name(c.id); got != c.want {
			t.Errorf("Name(%q) = %q, want %q", c.id, got, c.want)
		}
	}
	for _, id := range []string{"", "../../etc", "a/b", strings.Repeat("a", 65)} {
		if got := Name(id); strings.ContainsAny(got[len("skill-sandbox-"):], "./") || len(got) != len("skill-sandbox-")+32 {
			t.Errorf("Name(%q) = %q, want a fresh random name", id, got)
		}
	}
}

// TestUsualV1MountsMatchesMountinfo checks, on a host whose v1 hierarchies
// are mounted the usual way, that the placement found without mountinfo
// is the one mountinfo gives, for every controller a run may need.
func TestUsualV1MountsMatchesMountinfo(t *testing.T) {
	own, err := Own()
	if err != nil {
		t.Fatal(err)
	}
	ctrls := v1Controllers(Limits{CPUs: 1})
	usual, ok := usualV1Mounts(v1MountRoot, procCgroupNS, own, ctrls)
	if !ok {
		t.Skip("the cgroup v1 hierarchies are not mounted the usual way here (or this is cgroup v2, or a cgroup namespace)")
	}
	mounts, err := readMounts(proc.SelfMountinfo)
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
