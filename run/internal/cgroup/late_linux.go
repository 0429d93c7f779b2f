package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// Why a fresh init process joins its cgroup v1 cgroups itself, after they
// are made: making them (a memory cgroup's mkdir alone is about 0.1 ms
// here, the limits as much again) and being born inside them (see
// StartInside) came before the clone, on the way to the script. Now the
// supervisor places them (PlanLate), clones the init process, sends its
// program and only then makes them (MakeLate), while the init process
// builds the sandbox on the other core, and sends it a descriptor of each
// "tasks" file over its config socket (see LateChannel); the init
// process, last before Landlock, writes "0" to each (initplan's
// joinCgroup), as cheap a move as the supervisor's own thread made. The
// script is forked after that, inside, as before. Under cgroup v2, a
// layout other than the usual one, with the cpu controller (--cpus), or
// for a pooled init process, the cgroup is made first, as before (Open).
//
// Why descriptors: the kernel checks the identity that opened a "tasks"
// file against the task moved, and a root caller's init process is nobody
// on the host, which may not open root's files. Giving the files to
// nobody instead, even for a moment, would give them to every nobody
// process on the host, whose descriptors opened meanwhile keep working
// (an independent review showed one joining a run's cgroup so).

// PlanLate places the run's cgroup v1 cgroups named name without making
// them, where the caller's cgroups are in the usual layout (see
// usualV1Mounts) and writable, for an init process running as host uid
// initUID: a name free in every hierarchy (another run's of the same
// request id is not shared, see mkdir; one made between this check and
// the mkdir refuses the run). nil when that cannot be said: the caller
// then makes the cgroup first (Open), which says why when it cannot.
func PlanLate(name string, lim Limits, initUID int) *Cgroup {
	if initUID != os.Geteuid() && !HostRoot() {
		// The kernel lets a "tasks" descriptor move a task of another
		// identity only when it was opened by the host's root: root in
		// a user namespace (a container's) is not.
		return nil
	}
	if lim.CPUs > 0 {
		// The cpu controller refuses a real-time task (while the
		// cgroup's cpu.rt_runtime_us is 0, as a new one's is): only a
		// move before the program can leave the run without the layer
		// rather than refuse it (TestCgroupHalfJoined).
		return nil
	}
	own, err := Own()
	if err != nil {
		return nil
	}
	ctrls := v1Controllers(lim)
	mounts, ok := usualV1Mounts(v1MountRoot, procCgroupNS, own, ctrls)
	if !ok {
		return nil
	}
	cg := &Cgroup{version: 1, late: true}
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
			n = name + "-" + random.ID()[:8]
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

// HostRoot reports whether this process is root in the initial user
// namespace (its uid_map the identity over all uids).
func HostRoot() bool {
	if os.Geteuid() != 0 {
		return false
	}
	b, err := proc.ReadFile("/proc/self/uid_map", 256)
	return err == nil && strings.Join(strings.Fields(string(b)), " ") == "0 0 4294967295"
}

// TasksFiles are the "tasks" files of a cgroup PlanLate placed, which the
// init process joins (initplan's Input.JoinCgroup); nil for any other.
func (cg *Cgroup) TasksFiles() []string {
	if cg == nil || !cg.late {
		return nil
	}
	files := make([]string, len(cg.dirs))
	for i, dir := range cg.dirs {
		files[i] = filepath.Join(dir, "tasks")
	}
	return files
}

// MakeLate makes the cgroups PlanLate placed, with lim, and sends the
// init process on config (its end of LateChannel)
// stageconfig.CgroupByte with a descriptor of each one's "tasks" file, or
// a zero byte alone when they could not be made, which ends its start;
// any other cgroup (or none) is left alone. What was made is removed by
// Close, as any cgroup of the run.
func (cg *Cgroup) MakeLate(lim Limits, config *os.File) error {
	if cg == nil || !cg.late {
		return nil
	}
	err := cg.makeDirs(lim)
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, tasks := range cg.TasksFiles() {
		if err != nil {
			break
		}
		fd, oerr := unix.Open(tasks, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if oerr != nil {
			err = fmt.Errorf("opening %s: %v", tasks, oerr)
			break
		}
		fds = append(fds, fd)
	}
	word, rights := []byte{stageconfig.CgroupByte}, unix.UnixRights(fds...)
	if err != nil {
		word, rights = []byte{0}, nil
	}
	rc, serr := config.SyscallConn()
	if serr == nil {
		werr := rc.Write(func(fd uintptr) bool {
			serr = unix.Sendmsg(int(fd), word, rights, nil, unix.MSG_NOSIGNAL)
			return serr != unix.EAGAIN
		})
		if serr == nil {
			serr = werr
		}
	}
	// A send that finds the init process gone (it refused the run, say a
	// grant swapped meanwhile) leaves its report to say why; any other
	// failure would leave it waiting.
	if err == nil && serr != nil && serr != unix.EPIPE && serr != unix.ECONNRESET {
		err = fmt.Errorf("sending the init process its cgroup: %v", serr)
	}
	return err
}

// makeDirs is MakeLate's mkdir and limits.
func (cg *Cgroup) makeDirs(lim Limits) error {
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

// LateChannel makes the config channel of an init process that joins its
// cgroup late: a stream socket, which carries the "tasks" descriptors
// (see MakeLate) as a pipe cannot. sup, non-blocking, is the
// supervisor's end; initEnd is the init process's.
func LateChannel() (sup, initEnd *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(fds[0]), "config"), os.NewFile(uintptr(fds[1]), "config"), nil
}
