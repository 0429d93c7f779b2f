package reaper

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// IsNamespaceInit reports whether this init stage is PID 1 of a new PID
// namespace. It then stays PID 1 as the run's reaper and starts the
// script as its child (Run) instead of becoming the script.
//
// Why: the kernel shields a namespace's init from signals sent from inside
// the namespace unless it has a handler, and makes it the parent of every
// orphan. If the script were PID 1, `kill -KILL $$` would do nothing, a
// default-action SIGTERM from a child would be dropped, and the script
// would inherit zombies it never asked for.
func IsNamespaceInit() bool { return os.Getpid() == 1 }

// Run is the end of the init stage under a PID namespace, after
// every layer (see applyLayers) is in force on this thread: it starts the
// script as a child, which inherits the layers at fork, and reaps until the
// script exits. It returns the init stage's exit status.
//
// RLIMIT_AS must hold from the script's first instruction, but this Go
// process cannot live under it (the runtime reserves over 1 GiB of address
// space at start) and fork/exec offers no hook in between. So the child is
// started traced (PTRACE_TRACEME, which the seccomp filter allows): the
// kernel stops it right after its execve, before the script runs; the
// limit (and RLIMIT_NPROC, see below) is set on it with prlimit64, and only
// then is it released with PTRACE_DETACH.
//
// What protects the reaper from the script: it holds no descriptor the
// script gets (all are close-on-exec), it is not dumpable (so /proc/1/mem,
// environ and fd/ are closed), it ignores the signals on which the Go
// runtime would exit or crash (the kernel already drops SIGKILL, SIGSTOP
// and signals without a handler sent to a namespace's init from inside),
// and the script's seccomp filter refuses prlimit64 on any other process
// (the reaper's threads have pids of their own) and pidfd_getfd. The
// thread that set up the layers runs under all of them; the Go runtime's
// other threads get the seccomp filter and no_new_privs (TSYNC) but keep
// the namespace's capabilities and are outside the Landlock domain, which
// only matters if the script could run code in the reaper, and the points
// above are there to prevent that.
//
// When the script exits, the reaper kills and reaps whatever is left in
// the namespace, writes the script's wait status on stageconfig.StatusFD and exits;
// no process outlives the run.
func Run(cfg *stageconfig.Config, st Stage, report *os.File, goAhead func() bool) int {
	// Before the fork, so there is no moment the script could use. The
	// child undoes both: execve makes it dumpable again, and the Go
	// runtime resets the signals it handles (all of these, unless the
	// supervisor's caller had ignored SIGHUP or SIGINT) to the default
	// action in the child before execve; TestPIDNamespaceInit checks it.
	ignoreSignals(reaperIgnoredSignals()...)
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	proc.CloseExtraFDs()
	// The supervisor's go-ahead is awaited once the script has been
	// forked and has executed, stopped before its first instruction
	// (traced, see releaseScript): the round trip to the supervisor
	// overlaps the fork and exec. Asked once; a failure is reported only
	// after it, so the supervisor is not writing to a closed pipe.
	asked, allowed := false, false
	mayGo := func() bool {
		if !asked {
			asked, allowed = true, goAhead()
		}
		return allowed
	}
	setOOMScore(st.OOMScore, "1000") // the script inherits it
	pid, err := syscall.ForkExec(cfg.Argv[0], cfg.Argv, &syscall.ProcAttr{
		Dir:   cfg.Dir,
		Env:   cfg.Env,
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Ptrace: true},
	})
	setOOMScore(st.OOMScore, "0")
	if err != nil {
		if mayGo() {
			stageconfig.WriteReport(report, stageconfig.Report{ExecError: err.Error()})
		}
		return 127
	}
	if err := releaseScript(pid, cfg, st, mayGo); err != nil {
		unix.Kill(pid, unix.SIGKILL)
		if mayGo() {
			stageconfig.WriteReport(report, stageconfig.Report{ExecError: err.Error()})
		}
		return stageconfig.ExitFailure
	}
	// EOF on the report pipe tells the supervisor that the script runs.
	report.Close()
	return reap(pid)
}

// watchConfig starts the goroutine that ends the run when the supervisor
// closes the config pipe (timeout, cancellation): then every process of
// the namespace is killed and reaped here, so the script's status and
// CPU time are still reported (SIGKILL to PID 1 would make the kernel
// discard the children's usage). The read goes through Go's poller (the
// pipe made non-blocking): parked there, the goroutine holds no thread and
// no P. A plain read(2) held the only P (GOMAXPROCS=1) in the system call,
// and the locked main thread then waited for sysmon to take it back,
// 0.6 ms on a quiet machine and over 2 ms on a loaded one. It must start
// after the go-ahead was read from the same pipe.
func watchConfig() {
	read := func(b []byte) { unix.Read(stageconfig.ConfigFD, b) }
	if unix.SetNonblock(stageconfig.ConfigFD, true) == nil {
		conf := os.NewFile(stageconfig.ConfigFD, "config")
		read = func(b []byte) { conf.Read(b) }
	}
	go func() {
		var b [1]byte
		read(b[:])
		unix.Kill(-1, unix.SIGKILL)
	}()
}

// errNoGo is releaseScript's error when the supervisor refused the run.
var errNoGo = errors.New("the supervisor refused the run")

// releaseScript waits for the traced child's stop after execve, sets its
// address-space and process limits, waits for the supervisor's go-ahead
// (mayGo), starts the config pipe's watch and lets the script run.
func releaseScript(pid int, cfg *stageconfig.Config, st Stage, mayGo func() bool) error {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("waiting for the script to start: %v", err)
		}
		break
	}
	if !ws.Stopped() {
		return fmt.Errorf("the script ended before it started (wait status %#x)", uint32(ws))
	}
	if stageconfig.Has(cfg.Layers, stageconfig.LayerRlimits) {
		// The seccomp filter on this thread (inherited by the script)
		// refuses prlimit64 on another process; the other threads of
		// this process are not under it yet, and a goroutine other than
		// this locked one never runs on this thread.
		done := make(chan error)
		go func() { done <- setChildLimits(pid, cfg.Limits) }()
		if err := <-done; err != nil {
			return err
		}
	}
	if !mayGo() {
		return errNoGo
	}
	watchConfig()
	if st.Filtered {
		// Now every thread of the reaper gets the filter too.
		if err := seccomp.SyncThreads(); err != nil {
			return fmt.Errorf("seccomp for the reaper's threads: %v", err)
		}
	}
	if err := detach(pid, 0); err != nil {
		return fmt.Errorf("releasing the script: ptrace(PTRACE_DETACH): %v", err)
	}
	return nil
}

// setChildLimits sets RLIMIT_AS and RLIMIT_CPU on the stopped script (the
// reaper needs neither, and its own CPU time must not be capped: the
// script can make it work, e.g. with many orphans), and RLIMIT_NPROC:
// that limit counts every task of the namespace's uid, including this
// reaper's Go threads, which should not come out of the script's MaxProcs.
// They are counted now, plus reaperThreadSlack for threads the Go runtime
// may still start while the reaper waits (when a blocking system call
// hands its processor over), so the script gets MaxProcs tasks, or up to
// reaperThreadSlack more, never fewer.
func setChildLimits(pid int, l stageconfig.Limits) error {
	set := func(name string, resource int, v uint64) error {
		v = proc.WithinHardLimit(resource, v)
		lim := unix.Rlimit{Cur: v, Max: v}
		if err := unix.Prlimit(pid, resource, &lim, nil); err != nil {
			return fmt.Errorf("%s=%d on the script: %v", name, v, err)
		}
		return nil
	}
	if l.AddressSpace > 0 {
		if err := set("RLIMIT_AS", unix.RLIMIT_AS, l.AddressSpace); err != nil {
			return err
		}
	}
	if l.CPUSeconds > 0 {
		if err := set("RLIMIT_CPU", unix.RLIMIT_CPU, l.CPUSeconds); err != nil {
			return err
		}
	}
	if l.Procs > 0 {
		v, _ := proc.StatusValue("/proc/self/status", "Threads:")
		threads, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			threads = 8 // Go's runtime threads at rest, an upper bound
		}
		return set("RLIMIT_NPROC", unix.RLIMIT_NPROC, l.Procs+threads+ReaperThreadSlack)
	}
	return nil
}

// ReaperThreadSlack is how many threads the reaper's Go runtime may add
// after setChildLimits counted them (see there).
const ReaperThreadSlack = 2

// reap waits for the script (pid); other children are orphans of the run,
// reaped as they come. When the script has exited, whatever is left is
// killed and reaped too (their CPU time then counts), and the script's
// wait status goes out on stageconfig.StatusFD.
func reap(pid int) int {
	var script unix.WaitStatus
	exited := false
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ECHILD && exited {
			return sendReport(script)
		}
		if err != nil {
			return stageconfig.ExitFailure
		}
		if ws.Stopped() {
			// A child made us its tracer with PTRACE_TRACEME: let it go.
			detach(got, ws.StopSignal())
			continue
		}
		if got == pid {
			script, exited = ws, true
			unix.Kill(-1, unix.SIGKILL)
		}
	}
}

// sendReport writes the reaper's report (see stageconfig.ReaperReport) on stageconfig.StatusFD in
// one blocking write and returns the reaper's exit status: 0 only if the
// whole report went out, so the supervisor never trusts one it did not get
// whole. Every other process of the run has been reaped by now, so the
// usage of RUSAGE_CHILDREN is the run's; the reaper's own is added. The
// reaper closes its standard descriptors first: they are the run's output
// pipes, and the supervisor, which returns as soon as it has the report,
// must see them end without waiting for this process to exit.
func sendReport(ws unix.WaitStatus) int {
	for fd := 0; fd <= 2; fd++ {
		unix.Close(fd)
	}
	if flags, err := unix.FcntlInt(stageconfig.StatusFD, unix.F_GETFL, 0); err == nil && flags&unix.O_NONBLOCK != 0 {
		unix.FcntlInt(stageconfig.StatusFD, unix.F_SETFL, flags&^unix.O_NONBLOCK)
	}
	var self, children unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &self)
	unix.Getrusage(unix.RUSAGE_CHILDREN, &children)
	msg := stageconfig.AppendReaperReport(make([]byte, 0, stageconfig.ReaperReportLen), stageconfig.ReaperReport{
		Status:    syscall.WaitStatus(ws),
		User:      time.Duration(self.Utime.Nano() + children.Utime.Nano()),
		System:    time.Duration(self.Stime.Nano() + children.Stime.Nano()),
		MaxRSSKiB: max(self.Maxrss, children.Maxrss),
	})
	if n, err := unix.Write(stageconfig.StatusFD, msg); err != nil || n != len(msg) {
		return stageconfig.ExitFailure
	}
	// The end of the pipe tells the supervisor that the report is whole
	// and alone (see readReaperReport).
	unix.Close(stageconfig.StatusFD)
	return 0
}

// reaperIgnoredSignals are the classic signals 1–31 but SIGKILL and
// SIGSTOP (which cannot be ignored) and SIGCHLD (ignoring it would make
// the kernel reap the children for us and wait4 fail). Among them are the
// signals that end a Go program when another process sends them and
// nothing called signal.Notify (SIGHUP, SIGINT, SIGTERM kill it; SIGQUIT,
// SIGABRT, SIGSTKFLT, SIGSYS and the fault signals queued with
// rt_sigqueueinfo, which the runtime takes for real faults, crash it).
// Nothing in the reaper needs the others (SIGURG only drives the
// runtime's preemption). A real fault still kills the reaper: the kernel
// resets an ignored disposition when it forces a fault signal.
func reaperIgnoredSignals() []unix.Signal {
	var sigs []unix.Signal
	for sig := unix.Signal(1); sig < 32; sig++ {
		if sig != unix.SIGKILL && sig != unix.SIGSTOP && sig != unix.SIGCHLD {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

// ignoreSignals sets the disposition of sigs to SIG_IGN with rt_sigaction
// directly, behind the Go runtime's back. It is cheaper than os/signal (whose first
// use starts a thread, about 2 ms here), and safe in the reaper, where
// nothing uses os/signal. The struct layout (handler, flags, restorer,
// mask) is the kernel's on amd64 and arm64; elsewhere it does nothing, and
// the reaper keeps the Go runtime's dispositions.
func ignoreSignals(sigs ...unix.Signal) {
	if !seccomp.SigactionLayout {
		return
	}
	const sigIgn = 1
	act := [4]uint64{sigIgn}
	for _, sig := range sigs {
		unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	}
}

// detach ends a ptrace relation (PTRACE_DETACH), passing on the signal the
// tracee stopped with, but not the SIGTRAP of a traced execve.
func detach(pid int, sig unix.Signal) error {
	if sig == unix.SIGTRAP {
		sig = 0
	}
	if _, _, errno := unix.RawSyscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(pid), 0, uintptr(sig), 0, 0); errno != 0 {
		return errno
	}
	return nil
}
