package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// staleAge is how old a run's cgroup must be before another run removes
// it when it is empty: a run fills its cgroup within milliseconds of
// creating it.
const staleAge = time.Minute

// sweepStale removes the empty cgroups that runs whose supervisor was
// killed (SIGKILL, so no clean-up) left in parent. rmdir fails on a
// cgroup that still holds a process, so a live run is never touched.
func sweepStale(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), Prefix) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleAge {
			unix.Rmdir(filepath.Join(parent, e.Name()))
		}
	}
}

// sweepEvery is how many runs there are per sweep of stale cgroups, on
// average: a sweep lists the whole parent folder, and stale cgroups are
// rare (only a killed supervisor leaves one).
const sweepEvery = 16

// sweepDue picks the runs that sweep, by their cgroup name (random for
// every run but those given a request id).
func sweepDue(name string) bool {
	h := uint32(2166136261) // FNV-1a
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	return h%sweepEvery == 0
}
