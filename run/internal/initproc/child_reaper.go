//go:build linux && (amd64 || arm64)

package initproc

import (
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// The end of the init process: the script is executed in its place
// (childExec), or, under a PID namespace, started as its child while the
// init process stays, as PID 1 of the namespace, and reaps (childReaper).

// sigDfl and sigIgn are the kernel's SIG_DFL and SIG_IGN.
const (
	sigDfl = 0
	sigIgn = 1
)

// wall is __WALL: wait for every kind of child.
const wall = 0x40000000

// childResetSignals gives every signal the default action, but those
// ignored, which stay ignored as they would across execve. The fork
// copied the supervisor's Go signal handlers, which cannot run here (they
// need the runtime): every signal has been blocked since the fork, and
// this lets the script unblock them before its execve, which would reset
// caught signals itself, but only once it has happened. The struct
// sigaction of rt_sigaction(2) is handler, flags, restorer, mask here.
//
//go:norace
//go:nocheckptr
func childResetSignals() {
	var act, old [4]uint64
	for sig := uintptr(1); sig <= 64; sig++ {
		if sig == uintptr(unix.SIGKILL) || sig == uintptr(unix.SIGSTOP) {
			continue
		}
		act = [4]uint64{sigDfl}
		if _, e := sys(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&act)), uintptr(unsafe.Pointer(&old)), 8, 0, 0); e != 0 {
			continue
		}
		// SIGCHLD is the init process's to wait for: ignored, the kernel
		// would reap the children itself.
		if old[0] == sigIgn && sig != uintptr(unix.SIGCHLD) {
			sys(unix.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&old)), 0, 8, 0, 0)
		}
	}
}

// execError reports that step failed with errno e on fd.
//
//go:norace
//go:nocheckptr
func execError(fd uintptr, step, e uint32) {
	m := ExecError{Magic: execErrorMagic, Step: step, Errno: e}
	sys(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&m)), unsafe.Sizeof(m), 0, 0, 0)
}

// setLimit sets resource's soft and hard limit to v on this process.
//
//go:norace
//go:nocheckptr
func setLimit(resource uintptr, v uint64) uint32 {
	lim := [2]uint64{v, v}
	_, e := sys(unix.SYS_PRLIMIT64, 0, resource, uintptr(unsafe.Pointer(&lim)), 0, 0, 0)
	return e
}

// childStartScript executes the script: RLIMIT_AS and RLIMIT_CPU, the
// working folder, every descriptor above 2 close-on-exec, the signal mask
// emptied, execve. It returns only after a failure, reported on
// l.reportFD.
//
//go:norace
//go:nocheckptr
func childStartScript(l *launchData) {
	report := uintptr(l.reportFD)
	if l.as > 0 {
		if e := setLimit(unix.RLIMIT_AS, l.as); e != 0 {
			execError(report, StepLimitAS, e)
			return
		}
	}
	if l.cpu > 0 {
		if e := setLimit(unix.RLIMIT_CPU, l.cpu); e != 0 {
			execError(report, StepLimitCPU, e)
			return
		}
	}
	if _, e := sys(unix.SYS_CHDIR, uintptr(l.dir), 0, 0, 0, 0, 0); e != 0 {
		execError(report, StepChdir, e)
		return
	}
	sys(unix.SYS_CLOSE_RANGE, 3, uintptr(closeRangeAll), unix.CLOSE_RANGE_CLOEXEC, 0, 0, 0)
	var none uint64
	sys(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&none)), 0, 8, 0, 0)
	_, e := sys(unix.SYS_EXECVE, uintptr(l.argv0), uintptr(l.argv), uintptr(l.env), 0, 0, 0)
	// Every signal blocked again: the supervisor's handlers are still
	// installed (execve did not happen).
	all := ^uint64(0)
	sys(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&all)), 0, 8, 0, 0)
	execError(report, StepExecve, e)
}

// childExec is opExec: without a PID namespace the script replaces the
// init process. It returns only after a failure, reported.
//
//go:norace
//go:nocheckptr
func childExec(l *launchData) {
	childResetSignals()
	childStartScript(l)
}

// childReaper is opReaper, the end of the init process under a PID
// namespace: it starts the script as its child and stays PID 1 of the
// namespace, reaping every process, until the script has exited and every
// other process of the run is gone; then it sends the script's wait
// status and the run's usage on l.statusFD (stageconfig.ReaperReport) and
// exits 0. It returns the exit status of a failure.
//
// Why the init process stays to reap: the kernel shields a namespace's init
// from signals sent from inside the namespace unless it has a handler, and
// makes it the parent of every orphan. If the script were PID 1,
// `kill -KILL $$` would do nothing and it would inherit zombies it never
// asked for.
//
// What protects it from the script: it is not dumpable and its memory
// belongs to the supervisor's user namespace (the fork copied its
// mm), so neither ptrace nor /proc/1/mem reach it; every signal is blocked
// (SIGCHLD comes through a signalfd), and the kernel drops signals sent
// to a namespace's init from inside anyway; it holds no descriptor the
// script gets; it runs under every layer the script does, seccomp
// included, and being single-threaded, all of it does.
//
// RLIMIT_AS and RLIMIT_CPU are set by the script's child half itself
// before its execve (this process has no runtime that reserves memory, so
// nothing needs to be set after the exec); RLIMIT_NPROC is set here and
// inherited, with the init process counted in it.
//
//go:norace
//go:nocheckptr
func childReaper(a *arena, l *launchData, oom uintptr) int {
	report := uintptr(l.reportFD)
	// kill(-1) is the namespace's processes only for its PID 1; anywhere
	// else it would be every process the caller may signal.
	if pid, _ := sys(unix.SYS_GETPID, 0, 0, 0, 0, 0, 0); pid != 1 {
		execError(report, StepReaper, uint32(unix.EPERM))
		return stageconfig.ExitFailure
	}
	sys(unix.SYS_PRCTL, unix.PR_SET_DUMPABLE, 0, 0, 0, 0, 0)
	childResetSignals()
	sigchld := uint64(1) << (unix.SIGCHLD - 1)
	sfd, e := sys(unix.SYS_SIGNALFD4, ^uintptr(0), uintptr(unsafe.Pointer(&sigchld)), 8, unix.SFD_CLOEXEC|unix.SFD_NONBLOCK, 0, 0)
	if e != 0 {
		execError(report, StepReaper, e)
		return 127
	}
	if l.nproc > 0 {
		if e := setLimit(unix.RLIMIT_NPROC, l.nproc); e != 0 {
			execError(report, StepLimitProcs, e)
			return stageconfig.ExitFailure
		}
	}
	// The OOM killer must pick the script, not the init process (whose
	// death loses the script's status): the script inherits 1000, and
	// the init process goes back to 0 (raising one's own score needs no
	// privilege, and lowering it back to where it was neither).
	oomSet(oom, "1000")
	// Fork: the script follows, inside every layer the init process
	// built (namespaces, Landlock, seccomp, no capabilities), as the
	// sandbox identity; this process stays as PID 1 of the namespace.
	pid, e := sys(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if e == 0 && pid == 0 {
		childStartScript(l)
		exit(127)
	}
	oomSet(oom, "0")
	if e != 0 {
		execError(report, StepReaper, e)
		return 127
	}
	// EOF on the report pipe now tells the supervisor that the script
	// runs (its copy of the descriptor closes at execve).
	sys(unix.SYS_CLOSE, report, 0, 0, 0, 0, 0)
	return childReap(pid, sfd, uintptr(l.configFD), uintptr(l.statusFD))
}

// oomSet writes v to the open oom_score_adj file fd, unless fd is -1.
//
//go:norace
//go:nocheckptr
func oomSet(fd uintptr, v string) {
	if int(fd) < 0 {
		return
	}
	var b [8]byte
	n := copyString(b[:], v)
	sys(unix.SYS_PWRITE64, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(n), 0, 0, 0)
}

// childReap reaps until the script (pid) has exited and no process of the
// namespace is left: when the script exits, and when the supervisor
// closes (or writes to) the config descriptor (a timeout, a
// cancellation), everything else is killed, so its CPU time still counts
// and the script's status is the one reported. It returns the init
// process's exit status: 0 once the report is sent whole.
//
//go:norace
//go:nocheckptr
func childReap(pid, sfd, config, status uintptr) int {
	var script uint32
	exited := false
	// struct pollfd: fd, events, revents.
	fds := [2]struct {
		fd             int32
		events, revent int16
	}{{int32(sfd), unix.POLLIN, 0}, {int32(config), unix.POLLIN, 0}}
	nfds := uintptr(2)
	var buf [128]byte
	for {
		for {
			var ws uint32
			got, e := sys(unix.SYS_WAIT4, ^uintptr(0), uintptr(unsafe.Pointer(&ws)), unix.WNOHANG|wall, 0, 0, 0)
			if e == uint32(unix.EINTR) {
				continue
			}
			if e == uint32(unix.ECHILD) {
				if !exited {
					return stageconfig.ExitFailure
				}
				childLeaveCgroup()
				return childSendStatus(script, status)
			}
			if e != 0 {
				return stageconfig.ExitFailure
			}
			if got == 0 {
				break
			}
			if ws&0xff == 0x7f {
				// Stopped: a child made us its tracer with
				// PTRACE_TRACEME (where seccomp is missing). Let it go,
				// with the signal it stopped for but the SIGTRAP of a
				// traced execve.
				sig := uintptr(ws>>8) & 0xff
				if sig == uintptr(unix.SIGTRAP) {
					sig = 0
				}
				sys(unix.SYS_PTRACE, unix.PTRACE_DETACH, got, 0, sig, 0, 0)
				continue
			}
			if got == pid {
				script, exited = ws, true
			}
		}
		if exited {
			// Whatever is left goes, also a process forked while the
			// last kill swept the namespace.
			sys(unix.SYS_KILL, ^uintptr(0), uintptr(unix.SIGKILL), 0, 0, 0, 0)
		}
		fds[0].revent, fds[1].revent = 0, 0
		if _, e := sys(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), nfds, 0, 0, 0, 0); e != 0 && e != uint32(unix.EINTR) {
			return stageconfig.ExitFailure
		}
		if nfds == 2 && fds[1].revent != 0 {
			// The supervisor ends the run.
			sys(unix.SYS_READ, config, uintptr(unsafe.Pointer(&buf[0])), 1, 0, 0, 0)
			sys(unix.SYS_KILL, ^uintptr(0), uintptr(unix.SIGKILL), 0, 0, 0, 0)
			nfds = 1
		}
		if fds[0].revent != 0 {
			for {
				if _, e := sys(unix.SYS_READ, sfd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0); e != 0 {
					break
				}
			}
		}
	}
}

// childLeaveCgroup moves this process, the last of the run, into the
// supervisor's own cgroup of each hierarchy whose "tasks" file is in a
// stageconfig.HomeTasksFD slot. Writing "0" moves the writing thread, the
// init process's only one, without the global lock that moving another
// process takes. A slot the supervisor left empty may hold a descriptor the
// init process opened since (the signalfd): only one on a cgroup v1 file
// system is written to.
//
//go:norace
//go:nocheckptr
func childLeaveCgroup() {
	zero := byte('0')
	var fs unix.Statfs_t
	for fd := uintptr(stageconfig.HomeTasksFD); fd < stageconfig.HomeTasksFD+stageconfig.HomeTasksSlots; fd++ {
		if _, e := sys(unix.SYS_FSTATFS, fd, uintptr(unsafe.Pointer(&fs)), 0, 0, 0, 0); e != 0 || fs.Type != unix.CGROUP_SUPER_MAGIC {
			continue
		}
		sys(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&zero)), 1, 0, 0, 0)
		sys(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
	}
}

// childSendStatus sends the init process's final report
// (stageconfig.ReaperReport): the script's wait status, the CPU time of
// every process of the run, the init process's own included, and the
// largest peak resident size of the script and its descendants (the init
// process's would be that of the copy of the supervisor's memory the fork
// made, which is not the run's), in one blocking write; the standard
// descriptors are closed first, so the supervisor sees the output end.
//
//go:norace
//go:nocheckptr
func childSendStatus(ws uint32, status uintptr) int {
	for fd := uintptr(0); fd <= 2; fd++ {
		sys(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
	}
	var self, children unix.Rusage
	sys(unix.SYS_GETRUSAGE, uintptr(unix.RUSAGE_SELF), uintptr(unsafe.Pointer(&self)), 0, 0, 0, 0)
	sys(unix.SYS_GETRUSAGE, ^uintptr(0), uintptr(unsafe.Pointer(&children)), 0, 0, 0, 0) // RUSAGE_CHILDREN is -1
	var msg [stageconfig.ReaperReportLen]byte
	put32(msg[0:], ws)
	put64(msg[4:], micros(self.Utime)+micros(children.Utime))
	put64(msg[12:], micros(self.Stime)+micros(children.Stime))
	put64(msg[20:], uint64(children.Maxrss))
	if n, e := sys(unix.SYS_WRITE, status, uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg)), 0, 0, 0); e != 0 || n != uintptr(len(msg)) {
		return stageconfig.ExitFailure
	}
	sys(unix.SYS_CLOSE, status, 0, 0, 0, 0, 0)
	return 0
}

// micros is tv in microseconds.
//
//go:norace
//go:nocheckptr
func micros(tv unix.Timeval) uint64 { return uint64(tv.Sec)*1e6 + uint64(tv.Usec) }

// put32 and put64 write big-endian numbers.
//
//go:norace
//go:nocheckptr
func put32(b []byte, v uint32) {
	_ = b[3]
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

//go:norace
//go:nocheckptr
func put64(b []byte, v uint64) {
	put32(b, uint32(v>>32))
	put32(b[4:], uint32(v))
}
