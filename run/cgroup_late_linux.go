package run

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// Why a fresh init process joins its cgroup v1 cgroups itself, after they
// are made: making them (a memory cgroup's mkdir alone is about 0.1 ms
// here, the limits as much again) and being born inside them (see
// startInside) came before the clone, on the way to the script. Now the
// supervisor places them (planLateCgroup), clones the init process,
// sends its program and only then makes them (makeLate), while the init
// process builds the sandbox on the other core; the init process waits
// for its word before Landlock and writes "0" to each "tasks" file
// (initplan's joinCgroup), as cheap a move as the supervisor's own thread
// made. The script is forked after that, inside, as before. Under cgroup
// v2, a layout other than the usual one, with the cpu controller
// (--cpus), for a pooled init process, or where the init process's host
// identity is not the caller's (a root caller's is nobody), the cgroup is
// made first, as before (startInCgroup).
//
// Why not for a root caller: the init process could not open the "tasks"
// files (root's), and giving them to its identity, even for a moment,
// gives them to every process of that identity on the host: a descriptor
// opened meanwhile keeps working once they are root's again, since the
// kernel checks the opener's identity against the task it moves. An
// independent review showed a nobody process joining a run's cgroup so.

// planLateCgroup places the run's cgroup v1 cgroups named name without
// making them, where the caller's cgroups are in the usual layout (see
// usualV1Mounts) and writable, and the init process runs as the caller on
// the host (initUID), so that it may write to the files the caller's
// mkdir makes: a name free in every hierarchy (another run's of the same
// request id is not shared, see mkdirCgroup; one made between this check
// and the mkdir refuses the run). nil when that cannot be said:
// startInCgroup then makes the cgroup first, and says why when it cannot.
func planLateCgroup(name string, lim cgroupLimits, initUID int) *runCgroup {
	if initUID != os.Geteuid() {
		return nil
	}
	if lim.CPUs > 0 {
		// The cpu controller refuses a real-time task (while the
		// cgroup's cpu.rt_runtime_us is 0, as a new one's is): only a
		// move before the program can leave the run without the layer
		// rather than refuse it (TestCgroupHalfJoined).
		return nil
	}
	own, err := ownCgroups(procCgroup)
	if err != nil {
		return nil
	}
	ctrls := v1Controllers(lim)
	mounts, ok := usualV1Mounts(v1MountRoot, procCgroupNS, own, ctrls)
	if !ok {
		return nil
	}
	cg := &runCgroup{version: 1, late: true}
	for _, c := range ctrls {
		parent, err := mounts[c].hostDir(own[c])
		if err != nil || own[c] == "" || unix.Access(parent, unix.W_OK|unix.X_OK) != nil {
			return nil
		}
		cg.ctrls, cg.from, cg.home = append(cg.ctrls, c), append(cg.from, own[c]), append(cg.home, parent)
	}
	for try := range 3 {
		n := name
		if try > 0 {
			n = name + "-" + newRequestID()[:8]
		}
		var dirs []string
		for _, parent := range cg.home {
			dir := filepath.Join(parent, n)
			if _, err := os.Lstat(dir); err == nil {
				dirs = nil
				break
			}
			dirs = append(dirs, dir)
		}
		if dirs != nil {
			cg.dirs = dirs
			return cg
		}
	}
	return nil
}

// tasksFiles are the "tasks" files of a cgroup planLateCgroup placed, which
// the init process joins (initplan's Input.JoinCgroup); nil for any other.
func (cg *runCgroup) tasksFiles() []string {
	if cg == nil || !cg.late {
		return nil
	}
	files := make([]string, len(cg.dirs))
	for i, dir := range cg.dirs {
		files[i] = filepath.Join(dir, "tasks")
	}
	return files
}

// makeLate makes the cgroups planLateCgroup placed, with lim, and says so
// to the init process on config (stageconfig.CgroupByte), or that they
// could not be made, which ends its start; any other cgroup (or none) is
// left alone. What was made is removed by close, as any cgroup of the
// run.
func (cg *runCgroup) makeLate(lim cgroupLimits, config *os.File) error {
	if cg == nil || !cg.late {
		return nil
	}
	err := cg.makeDirs(lim)
	word := byte(stageconfig.CgroupByte)
	if err != nil {
		word = 0
	}
	// A write that fails finds the init process gone (it refused the
	// run, say a grant swapped meanwhile): its report says why.
	config.Write([]byte{word})
	return err
}

// makeDirs is makeLate's mkdir and limits.
func (cg *runCgroup) makeDirs(lim cgroupLimits) error {
	for i, dir := range cg.dirs {
		if sweepDue(filepath.Base(dir)) {
			go sweepStale(cg.home[i])
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("creating a cgroup in %s: %v", cg.home[i], unwrapPath(err))
		}
		if err := setV1(cg.ctrls[i], dir, lim); err != nil {
			return err
		}
	}
	return nil
}
