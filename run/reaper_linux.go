package run

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// reapAsPID1 runs the init stage's first role when it is PID 1 of a new PID
// namespace, and reports ok=false otherwise (no PID namespace: the init
// stage execs the script itself).
//
// Why a separate PID 1: the kernel shields a namespace's init from signals
// sent from inside the namespace unless it has a handler, and makes it the
// parent of every orphan. If the script were PID 1, `kill -KILL $$` would
// do nothing, a default-action SIGTERM from a child would be dropped, and
// the script would inherit zombies it never asked for. So PID 1 is this
// small Go reaper and the script runs as PID 2, with ordinary signal
// semantics.
//
// Why a second exec instead of a fork of the script from here: RLIMIT_AS
// must be in force before the script's first instruction, and a Go
// process cannot set it for a child alone (there is no hook between fork
// and execve) nor live under it itself (the runtime reserves over 1 GiB of
// address space at start). The exec stage (execArg0) sets it on itself
// right before its execve, exactly as the init stage does without a PID
// namespace.
//
// What protects the reaper from the script: it holds no descriptor the
// script gets; it is not dumpable and keeps the capabilities the script
// drops, so /proc/1/mem, environ, fd/ and ptrace, setpriority and the
// like are refused; Landlock's scopes keep the script's signals from
// reaching it, and it ignores the signals on which the Go runtime would
// exit or crash anyway (the kernel already drops SIGKILL, SIGSTOP and
// signals without a handler sent to a namespace's init from inside); the
// script's seccomp filter refuses prlimit64 on PID 1. After starting the
// exec stage it also takes no_new_privs and, when the run has the seccomp
// layer, the same filter, so that even a reaper taken over by a script
// whose caller disabled other layers is no stronger than the script.
//
// When the script exits, the reaper writes its wait status on statusFD
// and exits; the kernel then kills whatever is left in the namespace, so
// no process outlives the run.
func reapAsPID1() (status int, ok bool) {
	if os.Getpid() != 1 || os.Args[0] != initArg0 {
		return 0, false
	}
	return reap(), true
}

// reap starts the exec stage and waits for it; see reapAsPID1.
func reap() int {
	setSignalAction(sigIgnore, reaperIgnoredSignals()...)
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	// Only stdin, stdout, stderr, the config and the report pipe go to
	// the exec stage; the status pipe (and anything else) stays here.
	if unix.CloseRange(statusFD, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) != nil {
		unix.CloseOnExec(statusFD)
	}
	pid, err := syscall.ForkExec(selfExe(), []string{execArg0}, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2, configFD, reportFD},
	})
	if err != nil {
		writeReport(os.NewFile(reportFD, "report"), initReport{Fatal: "starting the exec stage: " + err.Error()})
		return initExitFailure
	}
	// The supervisor learns that execve succeeded from EOF on the report
	// pipe, and refuses the run by closing the config pipe: our copies
	// must not keep either open.
	unix.Close(configFD)
	unix.Close(reportFD)
	unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	confined := os.Getenv(reaperSeccompEnv) == "1" && installSeccompAllThreads() == nil
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return initExitFailure
		}
		if ws.Stopped() {
			// A child made us its tracer with PTRACE_TRACEME, which
			// only a run without the seccomp layer allows: let it go.
			if !confined {
				detach(got, ws.StopSignal())
			}
			continue
		}
		if got == pid {
			var msg [4]byte
			binary.BigEndian.PutUint32(msg[:], uint32(ws))
			unix.Write(statusFD, msg[:])
			return 0
		}
	}
}

// reaperTasks returns, in the exec stage, how many tasks the reaper (our
// parent) has: RLIMIT_NPROC counts every thread of the namespace's uid,
// and the Go runtime's few threads of the reaper should not come out of
// the script's MaxProcs. The reaper is already blocked in wait4 by the
// time the exec stage gets here, so the count does not grow afterwards.
// 0 outside the exec stage or when /proc cannot tell.
func reaperTasks() uint64 {
	if os.Args[0] != execArg0 {
		return 0
	}
	// PPid in /proc/self/status is in the namespace of that /proc mount:
	// 1 with the private /proc, the reaper's host pid without one.
	ppid, ok := statusField("/proc/self/status", "PPid:")
	if !ok {
		return 0
	}
	n, _ := statusField("/proc/"+strconv.FormatUint(ppid, 10)+"/status", "Threads:")
	return n
}

// statusField reads the number after key in a /proc status file.
func statusField(path, key string) (uint64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte(key)); ok {
			n, err := strconv.ParseUint(string(bytes.TrimSpace(rest)), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Signal dispositions for setSignalAction.
const (
	sigDefault = 0 // SIG_DFL
	sigIgnore  = 1 // SIG_IGN
)

// reaperIgnoredSignals are the signals that end a Go program when another
// process sends them and nothing called signal.Notify: SIGHUP, SIGINT and
// SIGTERM kill it, the others make it crash with a traceback (the fault
// signals when queued with rt_sigqueueinfo, which the runtime takes for a
// real fault). A real fault still kills the reaper: the kernel resets an
// ignored disposition when it forces a fault signal.
func reaperIgnoredSignals() []unix.Signal {
	return []unix.Signal{unix.SIGHUP, unix.SIGINT, unix.SIGTERM, unix.SIGQUIT, unix.SIGILL,
		unix.SIGTRAP, unix.SIGABRT, unix.SIGSTKFLT, unix.SIGSYS, unix.SIGSEGV, unix.SIGBUS, unix.SIGFPE}
}

// detach ends a ptrace relation a tracee started, passing on the signal
// it stopped with (but not the SIGTRAP of a traced execve).
func detach(pid int, sig unix.Signal) {
	if sig == unix.SIGTRAP {
		sig = 0
	}
	unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, uintptr(sig), 0, 0)
}

// setSignalAction sets the disposition of sigs to SIG_DFL or SIG_IGN with
// rt_sigaction directly, behind the Go runtime's back, and without
// allocating. It is cheaper than os/signal (whose first use starts a
// thread, about 2 ms here). In the reaper this is safe because nothing
// there uses os/signal; the runtime still believes it handles these
// signals, so the child it forks resets them to SIG_DFL before execve.
// The struct layout (handler, flags, restorer, mask) is the kernel's on
// amd64 and arm64.
func setSignalAction(action uintptr, sigs ...unix.Signal) {
	act := [4]uint64{uint64(action)}
	for _, sig := range sigs {
		unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	}
}
