package posix

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"

	"golang.org/x/sys/unix"
)

// UserNSRefused reports whether a clone error means "no user namespace
// here" rather than a broken binary.
func UserNSRefused(err error) bool {
	for _, e := range []error{unix.EPERM, unix.EACCES, unix.EINVAL, unix.ENOSPC, unix.EUSERS, unix.ENOSYS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// EnableSubreaper makes this process the reaper of orphaned Descendants
// when no PID namespace holds the tree together, so a daemonised child
// (double fork, setsid) is reparented to us and can be found and killed.
func EnableSubreaper(pidns bool) {
	if !pidns {
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	}
}

// KillAll ends a run. With a PID namespace, SIGKILL to its init (PID 1)
// makes the kernel kill every process in it. Without one, the process group
// is killed, then, round after round until none is left, every process of
// the run's session (see sweepSession); those reparented to us (we are a
// child subreaper) are reaped. The request id is not used: a process's
// environment is its own to forge.
//
// The init process is signalled through its Process (a pidfd),
// never once reaped. Its process group and session are swept by its pid,
// which is its own until it is reaped: launch sweeps before it reaps
// (Process.WaitSweeping), and a process left in the group or session
// keeps their id from being reused meanwhile. The members are held by pidfds
// (see member), and one sweep of a run goes at a time (the watchdog's kill
// and launch's may meet; where the kernel has no pidfds, two sweeps could
// otherwise both wait for one member by pid).
func KillAll(proc *Process, pidns bool) {
	proc.Kill()
	if pidns {
		return
	}
	proc.sweepMu.Lock()
	defer proc.sweepMu.Unlock()
	pid := proc.Pid()
	unix.Kill(-pid, unix.SIGKILL)
	for round := 0; round < 50; round++ {
		if sweepSession(pid) == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// sweepSession sends SIGKILL to every process of the session of pid (the
// init process, left out) and then reaps, without waiting, those that are
// our children and have exited; it returns how many processes it found.
// Every member is signalled before any is reaped, and none is waited for:
// a member a tracer in the session holds as a zombie (ptrace) is reaped
// in a later round, once the tracer is killed too.
func sweepSession(pid int) int {
	var ours []member
	found := sessionMembers(pid, func(m member) {
		m.signal()
		if m.ours {
			ours = append(ours, m)
		} else {
			m.close()
		}
	})
	for _, m := range ours {
		m.reap()
		m.close()
	}
	return found
}

// member is a process of a run's session. Where the kernel has pidfds
// (Linux 5.3) it is held by one (pidfd, else -1), opened after the process
// was listed and checked again through it (holdMember): the signal and the
// reap then reach the process that was listed, never one that took its
// pid after it exited and was reaped (by its parent, or by another sweep).
type member struct {
	pid   int
	pidfd int
	ours  bool // our child (reparented to us): we reap it
}

// signal sends m SIGKILL.
func (m member) signal() {
	if m.pidfd < 0 {
		unix.Kill(m.pid, unix.SIGKILL)
		return
	}
	unix.PidfdSendSignal(m.pidfd, unix.SIGKILL, nil, 0)
}

// reap reaps m, one of our children, if it has exited. Through its pidfd
// (Linux 5.4), else by its pid, which is still its own: it is our child,
// not reaped yet, and nothing else in this process reaps such children.
func (m member) reap() {
	if m.pidfd >= 0 {
		var info unix.Siginfo
		if unix.Waitid(unix.P_PIDFD, m.pidfd, &info, unix.WEXITED|unix.WNOHANG, nil) != unix.EINVAL {
			return
		}
	}
	unix.Wait4(m.pid, nil, unix.WNOHANG, nil)
}

// close lets go of m's pidfd.
func (m member) close() {
	if m.pidfd >= 0 {
		unix.Close(m.pidfd)
	}
}

// sessionMembers calls each with every process, other than the init process
// itself (pid), whose session is the run's (see holdMember), and returns
// how many there were; each owns the member it is given (close). The init
// process is started as a session leader, every process of the run inherits
// its session, and without a PID namespace the seccomp filter refuses
// setsid(2), the only way out of it (see seccomp_net_linux.go). The session
// id is the kernel's and cannot be forged; the kernel does not reuse the
// pid while the session exists. Zombies that are not our children are left
// to their parent, which is in the session too and gets killed.
func sessionMembers(pid int, each func(member)) int {
	self := strconv.Itoa(os.Getpid())
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	sid := strconv.Itoa(pid)
	found := 0
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == pid {
			continue
		}
		if m, ok := holdMember(n, sid, self); ok {
			found++
			each(m)
		}
	}
	return found
}

// holdMember returns process n as a member of session sid (self is this
// process's pid, for ours), held by a pidfd where the kernel has them; ok
// is false when n is not in the session, is gone, or is a zombie of
// another parent. The pidfd is opened after a first look at n's stat and
// kept only if a second look, taken while the process it holds is still
// unreaped (a signal 0 through it passes after, or is refused for
// permission, which the kernel says only of a process it found), finds n
// in the session: the pid cannot change hands in between, so that look
// was at the pidfd's process. Only where the kernel has no pidfds
// (ENOSYS, or EPERM from a container's seccomp policy) is the pid used
// alone; any other failure (the pid now a thread's, no descriptor left)
// leaves n to the next round.
func holdMember(n int, sid, self string) (member, bool) {
	name := strconv.Itoa(n)
	look := func() (ours, ok bool) {
		// state, ppid, pgrp, session
		f := proc.StatFields(name)
		if len(f) < 4 || f[3] != sid {
			return false, false
		}
		ours = f[1] == self
		return ours, f[0] != "Z" || ours
	}
	ours, ok := look()
	if !ok {
		return member{}, false
	}
	fd, err := unix.PidfdOpen(n, 0)
	if err == unix.ENOSYS || err == unix.EPERM {
		return member{pid: n, pidfd: -1, ours: ours}, true
	}
	if err != nil {
		return member{}, false
	}
	ours, ok = look()
	if err := unix.PidfdSendSignal(fd, 0, nil, 0); !ok || err != nil && err != unix.EPERM {
		unix.Close(fd)
		return member{}, false
	}
	return member{pid: n, pidfd: fd, ours: ours}, true
}

// MaxRSSKB converts ru_maxrss, which Linux reports in KiB.
func MaxRSSKB(ru *syscall.Rusage) int64 { return int64(ru.Maxrss) }

// CountProcs counts the host processes whose real uid is uid. Without a
// user namespace RLIMIT_NPROC counts all of them, so the fallback adds
// this count to MaxProcs to keep the cap per run.
func CountProcs(uid int) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	want := strconv.Itoa(uid)
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		uids, _ := proc.StatusValue("/proc/"+e.Name()+"/status", "Uid:")
		if f := strings.Fields(uids); len(f) > 0 && f[0] == want {
			n++
		}
	}
	return n
}
