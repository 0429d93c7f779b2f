package cgroup

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
)

// TestCgroupV2Delegation runs the cgroup v2 path itself (openV2),
// whatever Open would pick here: a cgroup next to or below this
// process's own, with the limit files read back. It needs a v2 hierarchy
// whose root offers the memory and pids controllers; on a host where they
// are bound to cgroup v1 hierarchies (a controller lives in one hierarchy
// only), no v2 cgroup can have them, a private cgroup2 mount included, and
// the test says so.
func TestCgroupV2Delegation(t *testing.T) {
	mounts, err := readMounts(proc.SelfMountinfo)
	if err != nil {
		t.Skipf("no cgroup mounts: %v", err)
	}
	m, ok := mounts["2"]
	if !ok {
		t.Skip("no cgroup v2 hierarchy is mounted")
	}
	ctl, _ := os.ReadFile(filepath.Join(m.dir, "cgroup.controllers"))
	have := strings.Fields(string(ctl))
	for _, c := range []string{"memory", "pids"} {
		if !slices.Contains(have, c) {
			t.Skipf("cgroup v2 at %s offers only %q: %s is bound to a cgroup v1 hierarchy on this host, so no v2 cgroup (a private cgroup2 mount included) can be delegated it", m.dir, have, c)
		}
	}
	own, err := Own()
	if err != nil {
		t.Fatal(err)
	}
	cg, err := openV2(m, own[""], Name(""), Limits{MemoryBytes: 96 << 20, Pids: 42})
	if err != nil {
		t.Skipf("no delegated cgroup v2 subtree for this caller: %v", err)
	}
	defer cg.Close()
	for file, want := range map[string]string{"memory.max": "100663296", "pids.max": "42", "memory.swap.max": "0"} {
		data, err := os.ReadFile(filepath.Join(cg.dirs[0], file))
		if err != nil {
			if file == "memory.swap.max" && os.IsNotExist(err) {
				continue // no swap accounting in this kernel
			}
			t.Errorf("%s: %v", file, err)
			continue
		}
		if got := strings.TrimSpace(string(data)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
}
