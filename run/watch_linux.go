package run

import (
	"bytes"
	"errors"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/artifacts"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// The supervisor's watch (layer "watch") keeps two promises that no kernel
// layer keeps without privileges:
//
//   - The work folder's total size and inode count, when the work folder is
//     a plain folder on the host disk: kept (--keep-workdir), or a degraded
//     run without a mount namespace and so without the size-capped tmpfs.
//     RLIMIT_FSIZE caps each file, but nothing caps the sum, and a project
//     quota (XFS/ext4 prjquota) needs root and a prepared file system.
//   - The run's total memory, when no cgroup caps it (an ordinary user
//     without a delegated cgroup v2 subtree): RLIMIT_AS is per process, so
//     128 processes of 450 MiB fit under a 512 MiB limit.
//
// Every watchInterval the watch walks the work folder (stopping as soon as
// it passes a cap, so a walk costs at most the inode cap in lstat calls)
// and, every watchProcEvery walks, the run's processes: their open
// descriptors for files deleted but still held on the work folder's file
// system (which no walk finds), and their private resident memory. Past a
// cap it kills the run, as the time limit does, and Result.LimitExceeded
// says which cap. It is a poll, not a kernel limit: a run can overshoot by
// what it writes or allocates in one interval plus the kill (docs/security.md
// has the measured figures).

// watchInterval is the time between two walks of the work folder, and
// watchProcEvery how many walks pass between two scans of the processes
// (which read every /proc entry of the host).
const (
	watchInterval  = 10 * time.Millisecond
	watchProcEvery = 5
)

// planWatch decides what the watch checks once the namespaces and the cgroup
// are known: the work folder when it is on the host disk (kept, or no mount
// namespace), the memory when there is no cgroup.
// The watch is reported in st.supervised when it has anything to do.
func planWatch(p *plan, st *started, cg *cgroup.Cgroup) watchPlan {
	var w watchPlan
	if stageconfig.Has(p.disabled, LayerWatch) {
		return w
	}
	if p.cfg.WorkDirMB == 0 || !stageconfig.Has(st.namespaces, LayerMountNS) {
		w.dir = p.cfg.WorkDir
		w.maxBytes = int64(p.watchWorkDirMB) << 20
		w.maxInodes = watchInodes(p.watchWorkDirMB)
	}
	if cg == nil {
		w.maxMemory = int64(p.memoryMB) << 20
	}
	for _, g := range p.cfg.Grants {
		if g.Write {
			w.grants = append(w.grants, g.Path)
		}
	}
	if len(w.grants) > 0 {
		// Taken before the script has its program: what the grants held
		// before the run is not the run's to answer for.
		base, ok := grantsUsage(w.grants, math.MaxInt64)
		if !ok {
			st.missing = append(st.missing, Missing{Layer: LayerWatch, Reason: "a write grant could not be walked to cap its growth"})
			w.grants = nil
		}
		w.grantBase, w.maxGrowth = base, int64(p.watchWriteMB)<<20
	}
	if !w.active() {
		return w
	}
	if st.pidns && st.pidNSLink == "" {
		// A stage of its own has not been sent its program yet (see
		// started.pidNSLink); a pooled one was read when it started.
		st.pidNSLink = readPIDNSLink(st.proc.Pid())
	}
	if st.pidns && st.pidNSLink == "" {
		// Without it the watch would count none of the run's
		// processes: the layer is missing, not silently idle.
		st.missing = append(st.missing, Missing{Layer: LayerWatch, Reason: "the init stage's PID namespace could not be read"})
		return watchPlan{}
	}
	w.pidNSLink = st.pidNSLink
	st.supervised = append(st.supervised, LayerWatch)
	return w
}

// readPIDNSLink returns the PID namespace link of process pid, or "" when
// it cannot be read.
func readPIDNSLink(pid int) string {
	link, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	return link
}

// runWatch checks w until done is closed; past a cap it calls exceeded once
// with the Limit* value and returns.
func runWatch(w watchPlan, initPID int, pidns bool, done <-chan struct{}, exceeded func(string)) {
	var dev uint64
	if w.dir != "" {
		var st unix.Stat_t
		if unix.Lstat(w.dir, &st) == nil {
			dev = st.Dev
		}
	}
	var grantDevs []uint64
	for _, g := range w.grants {
		var st unix.Stat_t
		if unix.Stat(g, &st) == nil && !slices.Contains(grantDevs, st.Dev) && (w.dir == "" || st.Dev != dev) {
			grantDevs = append(grantDevs, st.Dev)
		}
	}
	procs := newProcSet(initPID, pidns, w.pidNSLink)
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		var used int64
		if w.dir != "" {
			b, inodes, over := treeUsage(w.dir, w.maxBytes, w.maxInodes)
			switch {
			case inodes > w.maxInodes:
				exceeded(LimitWorkDirInodes)
				return
			case over:
				exceeded(LimitWorkDirBytes)
				return
			}
			used = b
		}
		var pids []int
		if w.maxMemory > 0 || n%watchProcEvery == 0 {
			pids = procs.list()
		}
		// statm's counters are cheap but count a page shared after fork
		// in every sharer; only past the cap is the exact figure read.
		if w.maxMemory > 0 && anonResident(pids) > w.maxMemory && privateMemory(pids) > w.maxMemory {
			exceeded(LimitMemory)
			return
		}
		reaper := -1 // without a PID namespace the init stage is the script
		if pidns {
			reaper = initPID
		}
		if w.dir != "" && n%watchProcEvery == 0 {
			held, hidden := heldDeleted(pids, dev, reaper)
			if hidden || used+held > w.maxBytes {
				exceeded(LimitWorkDirBytes)
				return
			}
		}
		// The write grants may be large trees: walked every
		// watchProcEvery ticks, with the files held deleted on their
		// file systems.
		if len(w.grants) > 0 && n%watchProcEvery == 0 {
			limit := w.grantBase + w.maxGrowth
			used, ok := grantsUsage(w.grants, limit)
			for _, d := range grantDevs {
				held, hidden := heldDeleted(pids, d, reaper)
				used += held
				ok = ok && !hidden
			}
			if !ok || used > limit {
				exceeded(LimitWriteBytes)
				return
			}
		}
	}
}

// treeUsage adds up the disk blocks and counts the entries under dir, each
// inode once (hard links), and stops early once either passes its cap:
// over is then true. The walk is artifacts.WalkNoFollow's: the script changes the
// folder as we walk it, and a folder swapped for a symlink to a FIFO once
// blocked the watch for good, and with it every cap. A vanished entry is
// skipped; any other error (a folder the script made unreadable, a tree
// too deep) also sets over, since what it hides cannot be counted.
func treeUsage(dir string, maxBytes, maxInodes int64) (bytes, inodes int64, over bool) {
	type key struct{ dev, ino uint64 }
	seen := map[key]bool{}
	err := artifacts.WalkNoFollow(dir, func(_ string, st *unix.Stat_t) bool {
		inodes++
		if k := (key{st.Dev, st.Ino}); !seen[k] {
			seen[k] = true
			bytes += st.Blocks * 512
		}
		return bytes <= maxBytes && inodes <= maxInodes
	})
	return bytes, inodes, err != nil || bytes > maxBytes || inodes > maxInodes
}

// grantsUsage adds up the disk blocks under the write grants, stopping
// once past limit; ok is false past it, or when a grant could not be
// walked (what it hides cannot be counted).
func grantsUsage(grants []string, limit int64) (used int64, ok bool) {
	for _, g := range grants {
		b, _, over := treeUsage(g, limit-used, math.MaxInt64)
		used += b
		if over {
			return used, false
		}
	}
	return used, true
}

// procSet lists the host pids of the run: with a PID namespace the
// processes in the init stage's namespace (compared by the namespace link,
// which a process cannot change: seccomp refuses setns and unshare), else
// the init stage and the members of its session (which a process cannot
// leave: seccomp refuses setsid without a PID namespace; see
// sessionMembers). Each pid is looked at once, when it first appears: a
// pid is not reused while /proc still lists it, and one reused between two
// looks would need the kernel to go through every pid (pid_max) within
// watchInterval.
type procSet struct {
	initPID int
	pidns   bool
	pidNS   string       // the init stage's PID namespace link
	known   map[int]bool // pid → whether it is the run's
}

// newProcSet returns the set of the run of initPID; pidNS is its PID
// namespace link (see started.pidNSLink) when pidns.
func newProcSet(initPID int, pidns bool, pidNS string) *procSet {
	return &procSet{initPID: initPID, pidns: pidns, pidNS: pidNS, known: map[int]bool{}}
}

// list returns the run's pids now in /proc.
func (ps *procSet) list() []int {
	f, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	now := make(map[int]bool, len(names))
	var out []int
	sid := strconv.Itoa(ps.initPID)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		now[pid] = true
		ours, ok := ps.known[pid]
		if !ok {
			switch {
			case pid == ps.initPID:
				ours = true
			case ps.pidns:
				ns, err := os.Readlink("/proc/" + name + "/ns/pid")
				ours = err == nil && ps.pidNS != "" && ns == ps.pidNS
				if err != nil && !errors.Is(err, os.ErrNotExist) && ownProcess(name) {
					// One of this user's that cannot be read yet (caught
					// mid-exec, say): looked at again next time rather
					// than taken as another run's for good.
					continue
				}
			default:
				ours = sessionOf(pid) == sid
			}
			ps.known[pid] = ours
		}
		if ours {
			out = append(out, pid)
		}
	}
	for pid := range ps.known {
		if !now[pid] {
			delete(ps.known, pid)
		}
	}
	return out
}

// ownProcess reports whether /proc/NAME belongs to this process's user.
func ownProcess(name string) bool {
	var st unix.Stat_t
	return unix.Stat("/proc/"+name, &st) == nil && int(st.Uid) == os.Geteuid()
}

// sessionOf returns the session id field of /proc/PID/stat, "" when it
// cannot be read.
func sessionOf(pid int) string {
	if f := statFields(strconv.Itoa(pid)); len(f) >= 4 {
		return f[3]
	}
	return ""
}

// statFields returns the fields of /proc/PID/stat after the command name
// (state, ppid, pgrp, session, ...); nil when it cannot be read. The name
// is in parentheses and may hold spaces and parentheses itself.
func statFields(pid string) []string {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return nil
	}
	return parseStatFields(stat)
}

// parseStatFields splits a /proc/PID/stat line after the command name.
// The name is the process's own to choose (prctl PR_SET_NAME, up to 15
// bytes, ")" and digits included), so it is skipped up to the last ")":
// nothing after the name holds one, and a name cannot pass for the fields
// that follow it (FuzzParseStatFields).
func parseStatFields(stat []byte) []string {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(stat[i+1:]))
}

// heldDeleted adds up the disk blocks of files on device dev that the
// processes hold open after their last name was removed (unlinked after
// opening, or O_TMPFILE): they take space until closed, yet no walk of
// the folder finds them. Each inode counts once. hidden is true when a
// process other than the reaper (which opens no file of the run; -1 for
// none) keeps its descriptors from being read, as a process that is not
// dumpable does from an unprivileged supervisor without a user namespace:
// what it holds cannot be bounded, so the caller counts the cap as passed.
func heldDeleted(pids []int, dev uint64, reaper int) (total int64, hidden bool) {
	seen := map[uint64]bool{}
	for _, pid := range pids {
		fdDir := "/proc/" + strconv.Itoa(pid) + "/fd"
		f, err := os.Open(fdDir)
		if err != nil {
			if pid != reaper && errors.Is(err, os.ErrPermission) && holdsFiles(pid) {
				hidden = true
			}
			continue
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		for _, name := range names {
			var st unix.Stat_t
			if unix.Stat(fdDir+"/"+name, &st) != nil {
				continue
			}
			if st.Dev != dev || st.Nlink != 0 || st.Mode&unix.S_IFMT != unix.S_IFREG || seen[st.Ino] {
				continue
			}
			seen[st.Ino] = true
			total += st.Blocks * 512
		}
	}
	return total, hidden
}

// holdsFiles reports whether process pid may still hold descriptors it
// can use: it is not a zombie (whose descriptors are closed, and whose
// /proc/PID/fd an unprivileged reader is refused all the same), nor a
// process in its exit past the release of its memory. /proc shows the
// latter as root's, so an unprivileged supervisor is refused its
// descriptors too, for the moment before the kernel closes them; it runs
// no more code. Taken for hidden, it stopped ordinary runs at their end
// (a matplotlib plot saved into a write grant, about one run in three, as
// uid 65534 without a cgroup).
func holdsFiles(pid int) bool {
	f := statFields(strconv.Itoa(pid))
	if len(f) == 0 || f[0] == "Z" || f[0] == "X" {
		return false
	}
	statm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	return err == nil && statmHasMemory(statm)
}

// statmHasMemory reports whether a /proc/PID/statm line may show an
// address space: false only for a total size of 0, which the kernel
// prints for a process without one (exiting, or a zombie); anything it
// cannot read counts as memory, so that a doubt keeps the process hidden.
// statm is readable by every user whatever the process's owner or
// dumpable flag.
func statmHasMemory(statm []byte) bool {
	f := strings.Fields(string(statm))
	if len(f) == 0 {
		return true
	}
	size, err := strconv.ParseUint(f[0], 10, 64)
	return err != nil || size > 0
}

// anonResident adds up the anonymous resident memory of the processes
// from statm (resident minus file-backed and shared), a cheap upper bound
// of privateMemory: a page shared after fork counts in every sharer.
func anonResident(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		total += anonResidentOf(pid)
	}
	return total
}

// anonResidentOf is anonResident of one process: its resident anonymous
// and shared-memory pages (RssAnon plus RssShmem: a MAP_SHARED anonymous
// mapping is shmem, which statm counts as shared with the files); status
// is readable whatever the process's dumpable flag. 0 when it is gone.
func anonResidentOf(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	return sumKB(string(data), "RssAnon:", "RssShmem:")
}

// sumKB adds up the "Name: N kB" lines of text named in names, in bytes.
func sumKB(text string, names ...string) int64 {
	var total int64
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || !slices.Contains(names, f[0]) {
			continue
		}
		if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 {
			total += kb << 10
		}
	}
	return total
}

// privateMemory adds up the anonymous memory of the processes, each page
// shared after fork split among its sharers (smaps_rollup: Pss_Anon and
// Pss_Shmem, the pages of MAP_SHARED anonymous mappings and of mapped
// tmpfs files, plus SwapPss for what was swapped out), so the sum is what the run really
// holds and a forked worker pool is not counted once per worker. Files
// mapped in (libraries, the host's) do not count; memory in tmpfs files
// counts under the tmpfs caps, and memfd_create and System V shared memory
// are refused without a cgroup (see seccomp.Policy.NoMemCgroup).
//
// smaps_rollup needs ptrace access, which a process that is not dumpable
// denies an unprivileged supervisor without a user namespace: such a
// process counts with its statm figure (anonResidentOf), which it cannot
// hide, rather than not at all.
func privateMemory(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
		if err != nil {
			total += anonResidentOf(pid)
			continue
		}
		total += sumKB(string(data), "Pss_Anon:", "Pss_Shmem:", "SwapPss:")
	}
	return total
}
