package watch

import (
	"errors"
	"os"
	"strconv"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"

	"golang.org/x/sys/unix"
)

// PIDNSLink returns the PID namespace link of process pid, or "" when it
// cannot be read. The watch tells the run's processes by it (procSet):
// read it before the init process runs its program, which makes it not
// dumpable.
func PIDNSLink(pid int) string {
	link, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	return link
}

// procSet lists the host pids of the run: with a PID namespace the
// processes in the init process's namespace (compared by the namespace
// link, which a process cannot change: seccomp refuses setns and unshare),
// with Plan.Tree the init process and its descendants (parentOf), else
// the init process and the members of its session (which a process
// cannot leave: seccomp refuses setsid without a PID namespace; see run's
// sessionMembers). Each pid is looked at once, when it first appears: a
// pid is not reused while /proc still lists it, and one reused between two
// looks would need the kernel to go through every pid (pid_max) within
// Interval.
type procSet struct {
	initPID int
	pidns   bool
	tree    bool         // the run is the init process's descendants
	pidNS   string       // the init process's PID namespace link
	known   map[int]bool // pid → whether it is the run's
}

// newProcSet returns the set of the run of initPID; pidNS is its PID
// namespace link (PIDNSLink) when pidns.
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
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		now[pid] = true
		ours, ok := ps.known[pid]
		if !ok {
			if ours, ok = ps.look(pid, name); !ok {
				continue
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

// look tells whether process pid (/proc/NAME) is the run's; ok is false
// when that cannot be told yet, and the pid is to be looked at again.
func (ps *procSet) look(pid int, name string) (ours, ok bool) {
	switch {
	case pid == ps.initPID:
		return true, true
	case ps.tree:
		return ps.descends(name)
	case ps.pidns:
		ns, err := os.Readlink("/proc/" + name + "/ns/pid")
		if err != nil && !errors.Is(err, os.ErrNotExist) && ownProcess(name) {
			// One of this user's that cannot be read yet (caught
			// mid-exec, say): looked at again next time rather than
			// taken as another run's for good.
			return false, false
		}
		return err == nil && ps.pidNS != "" && ns == ps.pidNS, true
	default:
		return sessionOf(pid) == strconv.Itoa(ps.initPID), true
	}
}

// descends tells whether process /proc/NAME descends from the init
// process, by its parent, looked at before it; ok is false while the
// parent is not looked at yet (a pid lower than its parent's, after the
// pids wrapped), to be asked again next time. A process keeps the
// parent it had when first looked at, even reparented: a run's process
// orphaned stays the run's.
func (ps *procSet) descends(name string) (ours, ok bool) {
	f := proc.StatFields(name)
	if len(f) < 2 {
		return false, true // gone
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil || ppid <= 0 {
		return false, true
	}
	ours, ok = ps.known[ppid]
	return ours, ok
}

// ownProcess reports whether /proc/NAME belongs to this process's user.
func ownProcess(name string) bool {
	var st unix.Stat_t
	return unix.Stat("/proc/"+name, &st) == nil && int(st.Uid) == os.Geteuid()
}

// sessionOf returns the session id field of /proc/PID/stat, "" when it
// cannot be read.
func sessionOf(pid int) string {
	if f := proc.StatFields(strconv.Itoa(pid)); len(f) >= 4 {
		return f[3]
	}
	return ""
}
