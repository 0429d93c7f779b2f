package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/random"
)

// needCgroup skips the test when no per-run cgroup can be had here, with
// the reason.
func needCgroup(t *testing.T) {
	t.Helper()
	if err := openProbe(); err != nil {
		t.Skipf("no per-run cgroup here (needs root, or a delegated cgroup v2 subtree): %v", err)
	}
}

// openProbe creates and removes a small cgroup, to tell whether runs
// here get one.
func openProbe() error {
	cg, err := Open(Name(""), Limits{MemoryBytes: 64 << 20, Pids: 64})
	if err != nil {
		return err
	}
	cg.Close()
	return nil
}

// TestCgroupLimitFiles checks that the limits reach the kernel's files.
func TestCgroupLimitFiles(t *testing.T) {
	needCgroup(t)
	cg, err := Open(Name(""), Limits{MemoryBytes: 96 << 20, Pids: 42, CPUs: 0.5})
	if err != nil {
		if strings.Contains(err.Error(), "cpu") {
			t.Skipf("no cpu controller for the run's cgroup: %v", err)
		}
		t.Fatal(err)
	}
	defer cg.Close()
	want := map[string]string{"memory.max": "100663296", "pids.max": "42", "cpu.max": "50000 100000"}
	if cg.version == 1 {
		want = map[string]string{"memory.limit_in_bytes": "100663296", "pids.max": "42", "cpu.cfs_quota_us": "50000", "cpu.cfs_period_us": "100000"}
	}
	for file, v := range want {
		found := false
		for _, dir := range cg.dirs {
			data, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				continue
			}
			found = true
			if got := strings.TrimSpace(string(data)); got != v {
				t.Errorf("%s = %q, want %q", file, got, v)
			}
		}
		if !found {
			t.Errorf("%s not found in %v", file, cg.dirs)
		}
	}
	dirs := cg.dirs
	cg.Close()
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still exists after close: %v", d, err)
		}
	}
}

// TestCgroupSweepsStale checks that an empty cgroup left by a killed run
// is removed by a sweep (see sweepDue), and that a fresh one is kept.
func TestCgroupSweepsStale(t *testing.T) {
	needCgroup(t)
	cg, err := Open(Name(""), Limits{MemoryBytes: 64 << 20, Pids: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	parent := filepath.Dir(cg.dirs[0])
	stale, err := mkdir(parent, Name(""))
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := mkdir(parent, Name(""))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(fresh)
	defer os.Remove(stale)
	old := time.Now().Add(-2 * staleAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Skipf("cannot age a cgroup folder here: %v", err)
	}
	sweepStale(parent)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale empty cgroup %s not removed: %v", stale, err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh cgroup %s removed: %v", fresh, err)
	}
}

// TestSweepDue checks that about one run in sweepEvery sweeps, so that
// stale cgroups do go away, and not every run pays for the listing.
func TestSweepDue(t *testing.T) {
	due := 0
	const n = 100 * sweepEvery
	for i := 0; i < n; i++ {
		if sweepDue(Name(random.ID())) {
			due++
		}
	}
	if due < n/sweepEvery/2 || due > 2*n/sweepEvery {
		t.Errorf("%d of %d runs sweep, want about %d", due, n, n/sweepEvery)
	}
}
