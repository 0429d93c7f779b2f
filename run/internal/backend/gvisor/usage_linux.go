package gvisor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
)

// v1Root is where the cgroup v1 hierarchies are mounted.
const v1Root = "/sys/fs/cgroup"

// usage is a cgroup the supervisor keeps around runsc's own, as root
// with cgroup v1: runsc removes the sandbox's cgroup before it exits, and
// with it the sandbox's CPU time and peak memory, while a parent's
// counters take every charge of its children and stay. runsc's cgroup is
// made inside it (the bundle's cgroupsPath, see path), with the run's
// limits, by runsc as before.
type usage struct {
	name string // the parent's folder name in each hierarchy
	id   string // the container's, runsc's cgroup inside the parent
}

// newUsage makes the parent cgroup of container id's in the memory and
// cpuacct hierarchies; nil when there are none (cgroup v2, or not root),
// and the run's figures are then unknown.
func newUsage(id string) *usage {
	if os.Geteuid() != 0 {
		return nil
	}
	u := &usage{name: "skill-sandbox-gvisor-" + id, id: id}
	for _, c := range []string{"memory/memory.max_usage_in_bytes", "cpuacct/cpuacct.usage"} {
		if _, err := os.Stat(filepath.Join(v1Root, c)); err != nil {
			return nil
		}
		if err := os.Mkdir(filepath.Join(v1Root, filepath.Dir(c), u.name), 0o755); err != nil {
			u.remove()
			return nil
		}
	}
	return u
}

// path is the bundle's cgroupsPath: runsc's cgroup inside the parent,
// in each hierarchy.
func (u *usage) path() string { return "/" + u.name + "/" + u.id }

// read returns the CPU time charged to the parent (the Sentry's, the
// gofer's and the script's, as the host counts it) and its peak memory
// charge; ok is false when either cannot be read.
func (u *usage) read() (cpu time.Duration, peakKB int64, ok bool) {
	ns, err1 := readInt(filepath.Join(v1Root, "cpuacct", u.name, "cpuacct.usage"))
	peak, err2 := readInt(filepath.Join(v1Root, "memory", u.name, "memory.max_usage_in_bytes"))
	if err1 != nil || err2 != nil || ns <= 0 || peak <= 0 {
		return 0, 0, false
	}
	return time.Duration(ns), peak >> 10, true
}

// remove removes the parent from every hierarchy, where runsc made it
// too, with a cgroup of runsc's left inside (one runsc delete did not
// remove).
func (u *usage) remove() {
	dirs, _ := filepath.Glob(filepath.Join(v1Root, "*", u.name))
	for _, d := range dirs {
		os.Remove(filepath.Join(d, u.id))
		os.Remove(d)
	}
}

// readInt reads a cgroup file holding one integer.
func readInt(path string) (int64, error) {
	b, err := proc.ReadFile(path, 64)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}
