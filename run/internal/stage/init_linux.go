package stage

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/reaper"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// rlimitNPROC is RLIMIT_NPROC; with a user namespace it counts the
// processes of the namespace's uid 0, i.e. of this run only.
const rlimitNPROC = unix.RLIMIT_NPROC

// applyLayers is the Linux init stage, in this order:
//
//  1. namespaces: report those clone(2) created; then the mount namespace
//     (a fresh read-only root with the system folders, a minimal /etc and
//     /dev, a private /proc, read-only skill folder, size-capped work
//     folder, then pivot_root; see setupMounts) and the UTS namespace (host name "skill-sandbox"),
//     which need CAP_SYS_ADMIN inside the namespace and so come first,
//     and the network namespace (loopback up, see setupNetNS);
//  2. rlimits, all but RLIMIT_AS (set right before execve);
//  3. capabilities: bounding, ambient, inheritable, permitted and effective
//     sets cleared and securebits locked, so the namespace's uid 0 holds
//     nothing and regains nothing at execve;
//  4. no_new_privs, required by 5 and 6 without CAP_SYS_ADMIN, and what
//     keeps setuid binaries and file capabilities inert;
//  5. Landlock: file system, TCP and scope rules;
//  6. seccomp: the deny-list, last, so that none of the above is blocked.
//
// Then the working directory is set, descriptors above 2 are marked
// close-on-exec, RLIMIT_AS is set and the script is executed (execScript);
// under a PID namespace the script is started as a child instead, and
// RLIMIT_AS is set on it alone (reaper.Run).
func applyLayers(cfg *config) ([]stageconfig.Layer, []stageconfig.Missing) {
	// The supervisor dies → so do we, also after our own credential
	// changes; execve of a non-setuid program keeps this setting.
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	// The namespaces clone(2) created exist: a failure while setting one
	// up leaves it built part-way and refuses the run (step.builds).
	steps := []step{
		{stageconfig.LayerUserNS, func(*config) error { return nil }, false},
		{stageconfig.LayerPIDNS, checkPIDNS, true},
		{stageconfig.LayerMountNS, setupMounts, true},
		{stageconfig.LayerIPCNS, func(*config) error { return nil }, false},
		{stageconfig.LayerUTSNS, setHostname, true},
		{stageconfig.LayerNetNS, setupNetNS, true},
		// Limits are only ever lowered (within the hard limit): a
		// failure leaves some set and others not, never a kernel
		// without them.
		{stageconfig.LayerRlimits, applyRlimits, true},
		// A capability set that could not be dropped is never a layer
		// the kernel lacks (dropCapabilities accepts having held none):
		// the script would keep CAP_SYS_ADMIN over its mounts, and could
		// unmount the masks.
		{stageconfig.LayerCaps, dropCapabilities, true},
		// prctl(PR_SET_NO_NEW_PRIVS) fails only where the kernel lacks
		// it (EINVAL before Linux 3.5): a layer not offered. Landlock
		// and seccomp then report their own refusal as its consequence.
		{stageconfig.LayerNoNewPrivs, setNoNewPrivs, false},
	}
	applied, missing := runSteps(cfg, steps)
	cfg.privateTmp = stageconfig.Has(applied, stageconfig.LayerMountNS)
	if reaper.IsNamespaceInit() {
		cfg.oomScore = reaper.OpenOOMScore()
	}
	// The three Landlock layers share one ruleset.
	la, lm := applyLandlock(cfg)
	applied, missing = append(applied, la...), append(missing, lm...)
	cfg.seccomp = seccomp.Policy{
		HostNet:   !stageconfig.Has(applied, stageconfig.LayerNetNS) && !cfg.AllowNetwork,
		SharedNet: !stageconfig.Has(applied, stageconfig.LayerNetNS),
		NoMount:   !stageconfig.Has(applied, stageconfig.LayerMountNS),
		NoIPC:     !stageconfig.Has(applied, stageconfig.LayerIPCNS),
		NoPID:     !stageconfig.Has(applied, stageconfig.LayerPIDNS),

		NoMemCgroup: !cfg.MemoryCgroup,
	}
	sa, sm := runSteps(cfg, []step{{stageconfig.LayerSeccomp, installSeccomp, true}})
	return append(applied, sa...), append(missing, sm...)
}

// checkPIDNS confirms that we are PID 1 of a new PID namespace: we then
// stay PID 1 as the reaper, the kernel kills every process of the run when
// we exit after the script, and no host process can be signalled.
func checkPIDNS(*config) error {
	if !reaper.IsNamespaceInit() {
		return fmt.Errorf("not PID 1 (pid %d)", os.Getpid())
	}
	return nil
}

// SandboxHostname replaces the host's name inside the UTS namespace.
const SandboxHostname = "skill-sandbox"

// setHostname hides the host name: the UTS namespace starts as a copy of
// the host's.
func setHostname(*config) error {
	if err := unix.Sethostname([]byte(SandboxHostname)); err != nil {
		return refusedOutright(fmt.Errorf("sethostname: %w", err))
	}
	unix.Setdomainname([]byte("(none)"))
	return nil
}

// setNoNewPrivs sets PR_SET_NO_NEW_PRIVS: execve can no longer grant
// privileges (setuid/setgid bits, file capabilities), and an unprivileged
// process may install Landlock and seccomp filters.
func setNoNewPrivs(*config) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	return nil
}

// refusedOutright marks err, the failure of a layer's first call that
// would change anything, as errUnavailable when it is a refusal of the
// call itself: EPERM or EACCES (a container's seccomp profile, an LSM) or
// ENOSYS (no such call). The layer is then as absent as on a host without
// it, which AllowDegraded may accept; any other errno, or any failure
// after the first change, leaves it built part-way (see step.builds).
func refusedOutright(err error) error {
	if isErrno(err, unix.EPERM, unix.EACCES, unix.ENOSYS) {
		return fmt.Errorf("%w; %w", err, errUnavailable)
	}
	return err
}

// noNewPrivs reports whether no_new_privs is set on this thread: without
// it (the no_new_privs layer missing or disabled) and without
// CAP_SYS_ADMIN, Landlock and seccomp refuse to load, as a consequence of
// that other missing layer rather than a failure of their own.
func noNewPrivs() bool {
	v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	return err == nil && v == 1
}

// isErrno reports whether err is one of errnos.
func isErrno(err error, errnos ...syscall.Errno) bool {
	for _, e := range errnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// execScript is the last step: RLIMIT_AS is set (last, so that it does not
// constrain the init stage's own set-up) and the script replaces us. Once
// the limit is in force the Go runtime must not allocate: growing its heap
// could fail under the cap and abort the runtime. So everything execve and
// the failure report need is prepared before the limit, and execve is a
// raw system call. It returns only when execve failed, after reporting.
func execScript(cfg *config, report *os.File) {
	fail := func(err error) {
		stageconfig.WriteReport(report, stageconfig.Report{ExecError: err.Error()})
	}
	argv0, err := syscall.BytePtrFromString(cfg.Argv[0])
	if err != nil {
		fail(err)
		return
	}
	argv, err := syscall.SlicePtrFromStrings(cfg.Argv)
	if err != nil {
		fail(err)
		return
	}
	envv, err := syscall.SlicePtrFromStrings(cfg.Env)
	if err != nil {
		fail(err)
		return
	}
	msg := make([]byte, 0, 256)
	if err := setAddressSpace(cfg); err != nil {
		fail(err)
		return
	}
	_, _, errno := unix.RawSyscall(unix.SYS_EXECVE,
		uintptr(unsafe.Pointer(argv0)),
		uintptr(unsafe.Pointer(&argv[0])),
		uintptr(unsafe.Pointer(&envv[0])))
	// Report without allocating: the message text comes from the errno
	// table and needs no JSON escaping.
	msg = append(msg, `{"ExecError":"`...)
	msg = append(msg, errno.Error()...)
	msg = append(msg, "\"}\n"...)
	unix.Write(stageconfig.ReportFD, msg)
}

// installSeccomp loads the filter on this thread; execve and fork keep
// it. It needs no_new_privs (or CAP_SYS_ADMIN), so it runs after
// setNoNewPrivs. As PID 1 the init stage outlives the set-up as the
// reaper: it extends the filter to its other threads once it has set the
// script's limits (releaseScript).
//
// A failure is errUnavailable when the kernel offers no seccomp filter
// (no filter for this architecture; ENOSYS, or EINVAL from a kernel built
// without CONFIG_SECCOMP_FILTER) or when EACCES follows from no_new_privs
// missing; any other (the filter not compiling, ENOMEM, E2BIG, EACCES
// with no_new_privs set) refuses the run (see step.builds).
func installSeccomp(cfg *config) error {
	var err error
	if pb := cfg.pre; pb != nil && pb.filter != nil && pb.policy == cfg.seccomp {
		// Assembled ahead by a pooled stage (prebuildRoot).
		err = seccomp.LoadFilter(0, pb.filter)
	} else {
		err = seccomp.Load(0, cfg.seccomp)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, seccomp.ErrUnsupported), isErrno(err, unix.ENOSYS, unix.EINVAL),
		isErrno(err, unix.EACCES) && !noNewPrivs():
		return fmt.Errorf("%w; %w", err, errUnavailable)
	}
	return err
}
