package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/internal/random"

	"golang.org/x/sys/unix"
)

// Cgroup is one run's cgroup, made by Open (or placed by PlanLate and
// made by MakeLate) and removed by Close. A nil *Cgroup is no cgroup:
// Close, MakeLate, OpenStats and TasksFiles leave it alone.
type Cgroup struct {
	version int      // 1 or 2
	dirs    []string // v2: one folder; v1: one per hierarchy, memory first
	// v1: the controller of each dir, and the caller's cgroup (as in
	// /proc/self/cgroup) it was made in (see StartInside).
	ctrls, from []string
	// home is, under v1, for each dir the folder of the caller's own
	// cgroup in that hierarchy, where the init process moves itself
	// before its report (see PassHomeTasks).
	home []string
	// release, when set, lets go of a thread that StartInside could not
	// move back out of the cgroup; backDone, when set, is closed once
	// that thread has tried (StartInside returns before).
	release  func()
	backDone chan struct{}
	// statFDs hold the files Stats reads (-1: not open) while statsOpen,
	// from OpenStats until Stats or Close.
	statFDs   [2]int
	statsOpen bool
	// late: v1 cgroups placed before the clone and made after it, which
	// the init process joins itself (see PlanLate).
	late bool
}

// Version is the cgroup's version: 1 or 2.
func (cg *Cgroup) Version() int { return cg.version }

// Open creates the run's cgroup named name with lim. On failure the error
// says, for each cgroup version present, why it could not be had.
func Open(name string, lim Limits) (*Cgroup, error) {
	own, err := Own()
	if err != nil {
		return nil, err
	}
	// With memory a v1 controller, a v2 cgroup could not have it: the
	// usual v1 layout is tried first, without mountinfo. Should that
	// fail, the search below gives the reasons.
	if mounts, ok := usualV1Mounts(v1MountRoot, procCgroupNS, own, v1Controllers(lim)); ok {
		if cg, err := openV1(mounts, own, name, lim); err == nil {
			return cg, nil
		}
	}
	mounts, err := readMounts(proc.SelfMountinfo)
	if err != nil {
		return nil, err
	}
	var why []string
	if m, ok := mounts["2"]; ok {
		cg, err := openV2(m, own[""], name, lim)
		if err == nil {
			return cg, nil
		}
		why = append(why, "v2: "+err.Error())
	}
	if _, ok := mounts["memory"]; ok {
		cg, err := openV1(mounts, own, name, lim)
		if err == nil {
			return cg, nil
		}
		why = append(why, "v1: "+err.Error())
	}
	if len(why) == 0 {
		return nil, errors.New("no cgroup file system is mounted")
	}
	return nil, errors.New(strings.Join(why, "; "))
}

// openV2 creates name in the caller's cgroup or its parent, the first
// that hands memory and pids (and cpu when asked) to its children.
func openV2(m mount, ownPath, name string, lim Limits) (*Cgroup, error) {
	if ownPath == "" {
		return nil, errors.New("this process has no cgroup v2 entry")
	}
	own, err := m.hostDir(ownPath)
	if err != nil {
		return nil, err
	}
	need := []string{"memory", "pids"}
	if lim.CPUs > 0 {
		need = append(need, "cpu")
	}
	candidates := []string{own}
	if own != m.dir {
		candidates = append(candidates, filepath.Dir(own))
	}
	var why []string
	for _, parent := range candidates {
		ctl, _ := proc.ReadFile(filepath.Join(parent, "cgroup.subtree_control"), maxCgroupFile)
		enabled := strings.Fields(string(ctl))
		var lacking []string
		for _, c := range need {
			if !slices.Contains(enabled, c) {
				lacking = append(lacking, c)
			}
		}
		if len(lacking) > 0 {
			why = append(why, fmt.Sprintf("%s does not delegate %s", parent, strings.Join(lacking, ", ")))
			continue
		}
		dir, err := mkdir(parent, name)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		cg := &Cgroup{version: 2, dirs: []string{dir}}
		if err := cg.setV2(lim); err != nil {
			cg.Close()
			return nil, err
		}
		return cg, nil
	}
	return nil, errors.New(strings.Join(why, "; "))
}

// openV1 creates name in the caller's cgroup of the memory and pids
// hierarchies (and cpu when asked).
func openV1(mounts map[string]mount, own map[string]string, name string, lim Limits) (*Cgroup, error) {
	cg := &Cgroup{version: 1}
	for _, c := range v1Controllers(lim) {
		m, ok := mounts[c]
		if !ok {
			cg.Close()
			return nil, fmt.Errorf("the %s controller is not mounted", c)
		}
		parent, err := m.hostDir(own[c])
		if err == nil && own[c] == "" {
			err = fmt.Errorf("this process has no %s cgroup", c)
		}
		var dir string
		if err == nil {
			dir, err = mkdir(parent, name)
		}
		if err != nil {
			cg.Close()
			return nil, err
		}
		cg.dirs, cg.home = append(cg.dirs, dir), append(cg.home, parent)
		cg.ctrls, cg.from = append(cg.ctrls, c), append(cg.from, own[c])
		if err := setV1(c, dir, lim); err != nil {
			cg.Close()
			return nil, err
		}
	}
	return cg, nil
}

// mkdir creates parent/name; another run's folder of the same name (a
// caller reusing a request id) is not shared: a random suffix is added.
// One run in sweepEvery also sweeps the stale cgroups of killed runs from
// parent, in the background: never on the caller's path.
func mkdir(parent, name string) (string, error) {
	if sweepDue(name) {
		go sweepStale(parent)
	}
	dir := filepath.Join(parent, name)
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrExist) {
		dir = filepath.Join(parent, name+"-"+random.ID()[:8])
		err = os.Mkdir(dir, 0o755)
	}
	if err != nil {
		return "", fmt.Errorf("creating a cgroup in %s: %v", parent, unwrapPath(err))
	}
	return dir, nil
}

// unwrapPath drops the path of a *PathError, which the message already
// names.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// write writes value to dir/file in one write, as the kernel wants.
func write(dir, file, value string) error {
	path := filepath.Join(dir, file)
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	for {
		// A limit write may reclaim memory, which a signal interrupts
		// (the runtime's preemption included); it is tried again.
		_, err = unix.Write(fd, []byte(value))
		if err != unix.EINTR {
			break
		}
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %q to %s: %v", value, filepath.Join(dir, file), unwrapPath(err))
	}
	return nil
}

// parentDir is filepath.Dir for the clean absolute paths of cgroup dirs.
func parentDir(dir string) string { return dir[:strings.LastIndexByte(dir, '/')] }
