package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// A per-run cgroup holds the whole process tree of one run (the init stage,
// the script and everything it starts) under one memory, process-count and
// optionally CPU limit. RLIMIT_AS and RLIMIT_NPROC are per process or per
// user: 128 processes of 450 MiB each, or memory held in memfds and tmpfs
// files, fit under them. The cgroup counts all of it.
//
// Where the cgroup comes from, in order:
//
//   - cgroup v2: a new child of the caller's own cgroup when that cgroup
//     already hands the memory and pids controllers to its children, else a
//     sibling in its parent (the caller's cgroup holds processes, so the
//     no-internal-process rule keeps it from enabling them). That is what a
//     delegated subtree gives an ordinary user under systemd (user@.service
//     and its app.slice), and what root gets almost anywhere. Nothing is
//     enabled or changed in a cgroup this package did not create.
//   - cgroup v1 (as root, or where the hierarchies are writable): a child
//     of the caller's cgroup in the memory and pids hierarchies (and cpu,
//     when a CPU limit is asked for). Where the memory controller is a v1
//     one and the hierarchies are mounted the usual way (usualV1Mounts),
//     v1 is tried first, without reading mountinfo: v2 could not have the
//     memory controller then.
//
// Where neither works the layer is reported missing with the reasons, and
// the run goes on: the cgroup guards the machine's resources, not the
// host's data, and RLIMIT_AS and RLIMIT_NPROC still hold each process.

// runCgroup is one run's cgroup, created by openCgroup and removed by
// close.
type runCgroup struct {
	version int      // 1 or 2
	dirs    []string // v2: one folder; v1: one per hierarchy, memory first
	// v1: the controller of each dir, and the caller's cgroup (as in
	// /proc/self/cgroup) it was made in (see startInside).
	ctrls, from []string
	// home is, under v1, for each dir the folder of the caller's own
	// cgroup in that hierarchy, where the reaper moves itself before its
	// report (see passHomeTasks).
	home []string
	// release, when set, lets go of a thread that startInside could
	// not move back out of the cgroup; backDone, when set, is closed once
	// that thread has tried (startInside returns before).
	release  func()
	backDone chan struct{}
	// statFDs hold the files stats reads (-1: not open) while statsOpen,
	// from openStats until stats or close.
	statFDs   [2]int
	statsOpen bool
	// late: v1 cgroups placed before the clone and made after it, which
	// the init process joins itself (see planLateCgroup).
	late bool
}

// The files that say where the cgroup hierarchies are and which cgroups
// this process is in.
const (
	procMountinfo = "/proc/self/mountinfo"
	procCgroup    = "/proc/self/cgroup"
)

// openCgroup creates the run's cgroup named name with lim. On failure the
// error says, for each cgroup version present, why it could not be had.
func openCgroup(name string, lim cgroupLimits) (*runCgroup, error) {
	own, err := ownCgroups(procCgroup)
	if err != nil {
		return nil, err
	}
	// With memory a v1 controller, a v2 cgroup could not have it: the
	// usual v1 layout is tried first, without mountinfo. Should that
	// fail, the search below gives the reasons.
	if mounts, ok := usualV1Mounts(v1MountRoot, procCgroupNS, own, v1Controllers(lim)); ok {
		if cg, err := openCgroupV1(mounts, own, name, lim); err == nil {
			return cg, nil
		}
	}
	mounts, err := cgroupMounts(procMountinfo)
	if err != nil {
		return nil, err
	}
	var why []string
	if m, ok := mounts["2"]; ok {
		cg, err := openCgroupV2(m, own[""], name, lim)
		if err == nil {
			return cg, nil
		}
		why = append(why, "v2: "+err.Error())
	}
	if _, ok := mounts["memory"]; ok {
		cg, err := openCgroupV1(mounts, own, name, lim)
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

// cgroupMount is one mounted cgroup hierarchy.
type cgroupMount struct {
	dir  string // mount point
	root string // the hierarchy's folder mounted there
}

// cgroupMounts reads the mounted hierarchies from mountinfo: key "2" for
// cgroup2, and each v1 controller's name (memory, pids, cpu, ...).
func cgroupMounts(path string) (map[string]cgroupMount, error) {
	data, err := proc.ReadFile(path, maxMountinfo)
	if err != nil {
		return nil, err
	}
	out := map[string]cgroupMount{}
	for line := range strings.Lines(string(data)) {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		m := cgroupMount{dir: unescapeMount(f[4]), root: unescapeMount(f[3])}
		switch g[0] {
		case "cgroup2":
			if _, seen := out["2"]; !seen {
				out["2"] = m
			}
		case "cgroup":
			for _, opt := range strings.Split(g[2], ",") {
				if _, seen := out[opt]; !seen && opt != "rw" && opt != "ro" {
					out[opt] = m
				}
			}
		}
	}
	return out, nil
}

// Bounds of the files read here: mountinfo (a host with thousands of
// mounts), a cgroup's process list (pids.max bounds it), a number.
const (
	maxMountinfo  = 16 << 20
	maxProcsList  = 16 << 20
	maxCgroupFile = 64 << 10
)

// unescapeMount decodes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ownCgroups reads this process's cgroup per hierarchy: key "" for v2,
// each controller's name for v1.
func ownCgroups(path string) (map[string]string, error) {
	data, err := proc.ReadFile(path, maxCgroupFile)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

// hostDir maps a cgroup path of /proc/self/cgroup into the mount.
func (m cgroupMount) hostDir(cgPath string) (string, error) {
	rel := cgPath
	if m.root != "/" {
		var ok bool
		if rel, ok = strings.CutPrefix(cgPath, m.root); !ok || (rel != "" && rel[0] != '/') {
			return "", fmt.Errorf("own cgroup %s is outside the mounted %s", cgPath, m.root)
		}
	}
	return filepath.Join(m.dir, filepath.FromSlash(rel)), nil
}

// openCgroupV2 creates name in the caller's cgroup or its parent, the first
// that hands memory and pids (and cpu when asked) to its children.
func openCgroupV2(m cgroupMount, ownPath, name string, lim cgroupLimits) (*runCgroup, error) {
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
		dir, err := mkdirCgroup(parent, name)
		if err != nil {
			why = append(why, err.Error())
			continue
		}
		cg := &runCgroup{version: 2, dirs: []string{dir}}
		if err := cg.setV2(lim); err != nil {
			cg.close()
			return nil, err
		}
		return cg, nil
	}
	return nil, errors.New(strings.Join(why, "; "))
}

// setV2 writes the limits of a v2 cgroup.
func (cg *runCgroup) setV2(lim cgroupLimits) error {
	dir := cg.dirs[0]
	if lim.MemoryBytes > 0 {
		if err := writeCgroup(dir, "memory.max", strconv.FormatInt(lim.MemoryBytes, 10)); err != nil {
			return err
		}
		// No swap: without it the limit would only move memory to disk.
		// The file is missing when the kernel has no swap accounting,
		// which also means swap is not charged separately.
		if err := writeCgroup(dir, "memory.swap.max", "0"); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if lim.Pids > 0 {
		if err := writeCgroup(dir, "pids.max", strconv.FormatInt(lim.Pids, 10)); err != nil {
			return err
		}
	}
	if lim.CPUs > 0 {
		quota, period := cpuQuota(lim.CPUs)
		if err := writeCgroup(dir, "cpu.max", fmt.Sprintf("%d %d", quota, period)); err != nil {
			return err
		}
	}
	return nil
}

// openCgroupV1 creates name in the caller's cgroup of the memory and pids
// hierarchies (and cpu when asked).
func openCgroupV1(mounts map[string]cgroupMount, own map[string]string, name string, lim cgroupLimits) (*runCgroup, error) {
	cg := &runCgroup{version: 1}
	for _, c := range v1Controllers(lim) {
		m, ok := mounts[c]
		if !ok {
			cg.close()
			return nil, fmt.Errorf("the %s controller is not mounted", c)
		}
		parent, err := m.hostDir(own[c])
		if err == nil && own[c] == "" {
			err = fmt.Errorf("this process has no %s cgroup", c)
		}
		var dir string
		if err == nil {
			dir, err = mkdirCgroup(parent, name)
		}
		if err != nil {
			cg.close()
			return nil, err
		}
		cg.dirs, cg.home = append(cg.dirs, dir), append(cg.home, parent)
		cg.ctrls, cg.from = append(cg.ctrls, c), append(cg.from, own[c])
		if err := setV1(c, dir, lim); err != nil {
			cg.close()
			return nil, err
		}
	}
	return cg, nil
}

// setV1 writes the limits of controller c in its v1 cgroup dir.
func setV1(c, dir string, lim cgroupLimits) error {
	switch c {
	case "memory":
		v := strconv.FormatInt(lim.MemoryBytes, 10)
		if err := writeCgroup(dir, "memory.limit_in_bytes", v); err != nil {
			return err
		}
		// memsw is memory plus swap: equal to the memory limit, no swap.
		// Without swap accounting it is missing; then keep anonymous
		// memory out of swap as far as the kernel allows.
		if err := writeCgroup(dir, "memory.memsw.limit_in_bytes", v); errors.Is(err, os.ErrNotExist) {
			writeCgroup(dir, "memory.swappiness", "0")
		} else if err != nil {
			return err
		}
	case "pids":
		return writeCgroup(dir, "pids.max", strconv.FormatInt(lim.Pids, 10))
	case "cpu":
		quota, period := cpuQuota(lim.CPUs)
		if err := writeCgroup(dir, "cpu.cfs_period_us", strconv.FormatInt(period, 10)); err != nil {
			return err
		}
		return writeCgroup(dir, "cpu.cfs_quota_us", strconv.FormatInt(quota, 10))
	}
	return nil
}

// staleCgroupAge is how old a run's cgroup must be before another run
// removes it when it is empty: a run fills its cgroup within milliseconds
// of creating it.
const staleCgroupAge = time.Minute

// sweepStale removes the empty cgroups that runs whose supervisor was
// killed (SIGKILL, so no clean-up) left in parent. rmdir fails on a
// cgroup that still holds a process, so a live run is never touched.
func sweepStale(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), cgroupPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleCgroupAge {
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

// mkdirCgroup creates parent/name; another run's folder of the same name
// (a caller reusing a request id) is not shared: a random suffix is added.
// One run in sweepEvery also sweeps the stale cgroups of killed runs from
// parent, in the background: never on the caller's path.
func mkdirCgroup(parent, name string) (string, error) {
	if sweepDue(name) {
		go sweepStale(parent)
	}
	dir := filepath.Join(parent, name)
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrExist) {
		dir = filepath.Join(parent, name+"-"+newRequestID()[:8])
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

// writeCgroup writes value to dir/file in one write, as the kernel wants.
func writeCgroup(dir, file, value string) error {
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

// attach moves process pid, with all its threads, into the cgroup. The
// init stage does nothing before it has read its config, which the
// supervisor sends after this, so the script and everything it starts are
// born inside.
//
// All or nothing: when a v1 hierarchy refuses the move that another took
// (the cpu controller refuses a real-time task while the new cgroup's
// cpu.rt_runtime_us is 0; or a stage born part-way inside, see
// startInside), pid is moved back out of every one of the run's cgroups
// it is in, to the cgroup each was made in, and the error is the refusal:
// close, which kills every member, then leaves it alone and the run goes
// on without the layer. When it cannot be moved back, the error wraps
// errHalfJoined: the process is in a half-configured cgroup, and must not
// run.
func (cg *runCgroup) attach(pid int) error {
	id := strconv.Itoa(pid)
	for _, dir := range cg.dirs {
		if err := writeCgroup(dir, "cgroup.procs", id); err != nil {
			if berr := cg.moveOut(id); berr != nil {
				return fmt.Errorf("%v; %w: %v", err, errHalfJoined, berr)
			}
			return err
		}
	}
	return nil
}

// errHalfJoined says that a process is in some of a run's cgroups and
// could not be moved back out (see attach).
var errHalfJoined = errors.New("moving the init stage back out of the cgroups it had entered failed")

// moveOut moves process id out of each of the run's cgroups that lists
// it, into the cgroup it was made in.
func (cg *runCgroup) moveOut(id string) error {
	var errs []error
	for _, dir := range cg.dirs {
		data, err := proc.ReadFile(filepath.Join(dir, "cgroup.procs"), maxProcsList)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if slices.Contains(strings.Fields(string(data)), id) {
			errs = append(errs, writeCgroup(parentDir(dir), "cgroup.procs", id))
		}
	}
	return errors.Join(errs...)
}

// stats reads the peak memory and the OOM kill count.
func (cg *runCgroup) stats() cgroupStats {
	peak, events := cg.statsFiles()
	read := func(i int, name string) []byte {
		if fd := cg.statFDs[i]; cg.statsOpen && fd >= 0 {
			if b, err := preadAll(fd); err == nil {
				return b
			}
		}
		b, _ := proc.ReadFile(filepath.Join(cg.dirs[0], name), maxCgroupFile)
		return b
	}
	var st cgroupStats
	st.PeakBytes, _ = strconv.ParseInt(strings.TrimSpace(string(read(0, peak))), 10, 64)
	for line := range strings.Lines(string(read(1, events))) {
		if rest, ok := strings.CutPrefix(line, "oom_kill "); ok {
			st.OOMKills, _ = strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
		}
	}
	cg.closeStats()
	return st
}

// statsFiles names the files stats reads in the memory cgroup: the peak
// charge, and the events that count OOM kills.
func (cg *runCgroup) statsFiles() (peak, events string) {
	if cg.version == 2 {
		return "memory.peak", "memory.events"
	}
	return "memory.max_usage_in_bytes", "memory.oom_control"
}

// openStats opens the files stats reads, once the cgroup is made and the
// init process has its program: the first lookup of a new cgroup's file
// makes its inode, about 50 us each here, which stats, on the way from the
// reaper's report to the caller, then does not wait for. A file that does
// not open is read by name.
func (cg *runCgroup) openStats() {
	if cg == nil || len(cg.dirs) == 0 || cg.statsOpen {
		return
	}
	cg.statFDs, cg.statsOpen = [2]int{-1, -1}, true
	peak, events := cg.statsFiles()
	for i, name := range []string{peak, events} {
		if fd, err := unix.Open(filepath.Join(cg.dirs[0], name), unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			cg.statFDs[i] = fd
		}
	}
}

// closeStats closes what openStats opened.
func (cg *runCgroup) closeStats() {
	if !cg.statsOpen {
		return
	}
	for _, fd := range cg.statFDs {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	cg.statsOpen = false
}

// preadAll reads a small cgroup file from its start; a file that fills
// the buffer is an error (the caller then reads it by name, up to
// maxCgroupFile).
func preadAll(fd int) ([]byte, error) {
	buf := make([]byte, 4096)
	n := 0
	for {
		if n == len(buf) {
			return nil, proc.ErrTooLarge
		}
		k, err := unix.Pread(fd, buf[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	return buf[:n], nil
}

// passHomeTasks opens, for a v1 cgroup, the "tasks" file of each home
// cgroup and puts it in spec's HomeTasksFD slots (see there: the reaper
// moves itself home with them before its report). It returns what closes
// the supervisor's copies once the init stage has started. Where a file
// cannot be opened, or under v2, where a process can only move itself to
// another domain under a global lock that waits for an RCU grace period
// (milliseconds), the slots stay empty and the cgroup is removed after
// the reaper's exit instead.
func (cg *runCgroup) passHomeTasks(spec *launchSpec) (closeAll func()) {
	first := stageconfig.HomeTasksFD - stageconfig.ConfigFD
	if cg.version != 1 || len(cg.home) != len(cg.dirs) || len(cg.home) > stageconfig.HomeTasksSlots || len(spec.extra) < first+stageconfig.HomeTasksSlots {
		return func() {}
	}
	var files []*os.File
	closeAll = func() {
		for _, f := range files {
			f.Close()
		}
		for i := range stageconfig.HomeTasksSlots {
			spec.extra[first+i] = nil
		}
	}
	for _, home := range cg.home {
		f, err := os.OpenFile(filepath.Join(home, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			closeAll()
			return func() {}
		}
		files = append(files, f)
	}
	copy(spec.extra[first:], files)
	return closeAll
}

// removeEmpty removes the cgroup's folders, which rmdir allows only when
// no process is left in them, and reports whether all are gone. The
// cgroup is closed then; otherwise close must still be called.
func (cg *runCgroup) removeEmpty() bool {
	cg.waitBack()
	var left, leftHome []string
	for i, dir := range cg.dirs {
		if err := unix.Rmdir(dir); err != nil && err != unix.ENOENT {
			left = append(left, dir)
			if i < len(cg.home) {
				leftHome = append(leftHome, cg.home[i])
			}
		}
	}
	cg.dirs, cg.home = left, leftHome
	return len(left) == 0
}

// waitBack waits until the thread that started the init stage inside the
// cgroup has tried to move back out (see startInside).
func (cg *runCgroup) waitBack() {
	if cg.backDone != nil {
		<-cg.backDone
		cg.backDone = nil
	}
}

// close kills every process left in the cgroup and removes it; a nil or
// closed cgroup is left alone.
func (cg *runCgroup) close() {
	if cg == nil {
		return
	}
	cg.closeStats()
	cg.waitBack()
	if cg.release != nil {
		cg.release()
		cg.release = nil
	}
	if cg.removeEmpty() {
		return
	}
	for _, dir := range cg.dirs {
		if cg.version == 2 && writeCgroup(dir, "cgroup.kill", "1") == nil {
			continue
		}
		killMembers(dir)
	}
	for _, dir := range cg.dirs {
		// Killed processes leave the cgroup once the kernel has released
		// them; until then rmdir fails with EBUSY.
		for i := 0; i < 200; i++ {
			err := unix.Rmdir(dir)
			if err == nil || err == unix.ENOENT {
				break
			}
			if err != unix.EBUSY {
				break
			}
			if i%20 == 19 {
				killMembers(dir)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	cg.dirs = nil
}

// killMembers sends SIGKILL to every process listed in dir, round after
// round until none is left (a process may fork between the read and the
// kill; pids.max bounds how long that can go on). This process is never
// signalled: one of its threads may be listed (see startInside).
func killMembers(dir string) {
	self := os.Getpid()
	for round := 0; round < 100; round++ {
		data, err := proc.ReadFile(filepath.Join(dir, "cgroup.procs"), maxProcsList)
		if err != nil {
			return
		}
		killed := 0
		for _, p := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(p); err == nil && n > 0 && n != self {
				unix.Kill(n, unix.SIGKILL)
				killed++
			}
		}
		if killed == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// readInt reads a file holding one decimal number; 0 when it cannot.
func readInt(path string) int64 {
	data, err := proc.ReadFile(path, maxCgroupFile)
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n
}

// keyedInt reads the number after key in a "key value" per line file
// (memory.events, memory.oom_control); 0 when the file or key is missing.
func keyedInt(path, key string) int64 {
	v, _ := proc.StatusValue(path, key+" ")
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// cpuQuota turns a number of CPUs into a quota per cpuPeriod, both in
// microseconds, with the kernel's minimum quota of 1 ms.
func cpuQuota(cpus float64) (quota, period int64) {
	period = cpuPeriod.Microseconds()
	return max(int64(cpus*float64(period)), 1000), period
}
