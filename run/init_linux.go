package run

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

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
// RLIMIT_AS is set on it alone (spawnAndReap).
func applyLayers(cfg *initConfig) ([]Layer, []Missing) {
	// The supervisor dies → so do we, also after our own credential
	// changes; execve of a non-setuid program keeps this setting.
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0)
	steps := []step{
		{LayerUserNS, func(*initConfig) error { return nil }},
		{LayerPIDNS, checkPIDNS},
		{LayerMountNS, setupMounts},
		{LayerIPCNS, func(*initConfig) error { return nil }},
		{LayerUTSNS, setHostname},
		{LayerNetNS, setupNetNS},
		{LayerRlimits, applyRlimits},
		{LayerCaps, dropCapabilities},
		{LayerNoNewPrivs, setNoNewPrivs},
	}
	applied, missing := runSteps(cfg, steps)
	if isNamespaceInit() {
		cfg.oomScore = openOOMScore()
	}
	// The three Landlock layers share one ruleset.
	la, lm := applyLandlock(cfg)
	applied, missing = append(applied, la...), append(missing, lm...)
	cfg.seccomp = seccompPolicy{
		hostNet:   !has(applied, LayerNetNS) && !cfg.AllowNetwork,
		sharedNet: !has(applied, LayerNetNS),
		noMount:   !has(applied, LayerMountNS),
		noIPC:     !has(applied, LayerIPCNS),
		noPID:     !has(applied, LayerPIDNS),

		noMemCgroup: !cfg.MemoryCgroup,
	}
	sa, sm := runSteps(cfg, []step{{LayerSeccomp, installSeccomp}})
	return append(applied, sa...), append(missing, sm...)
}

// checkPIDNS confirms that we are PID 1 of a new PID namespace: we then
// stay PID 1 as the reaper, the kernel kills every process of the run when
// we exit after the script, and no host process can be signalled.
func checkPIDNS(*initConfig) error {
	if !isNamespaceInit() {
		return fmt.Errorf("not PID 1 (pid %d)", os.Getpid())
	}
	return nil
}

// sandboxHostname replaces the host's name inside the UTS namespace.
const sandboxHostname = "skill-sandbox"

// setHostname hides the host name: the UTS namespace starts as a copy of
// the host's.
func setHostname(*initConfig) error {
	if err := unix.Sethostname([]byte(sandboxHostname)); err != nil {
		return fmt.Errorf("sethostname: %v", err)
	}
	unix.Setdomainname([]byte("(none)"))
	return nil
}

// setNoNewPrivs sets PR_SET_NO_NEW_PRIVS: execve can no longer grant
// privileges (setuid/setgid bits, file capabilities), and an unprivileged
// process may install Landlock and seccomp filters.
func setNoNewPrivs(*initConfig) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %v", err)
	}
	return nil
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
func execScript(cfg *initConfig, report *os.File) {
	fail := func(err error) {
		writeReport(report, initReport{ExecError: err.Error()})
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
	unix.Write(reportFD, msg)
}

// installSeccomp loads the filter on this thread; execve and fork keep
// it. It needs no_new_privs (or CAP_SYS_ADMIN), so it runs after
// setNoNewPrivs. As PID 1 the init stage outlives the set-up as the
// reaper: it extends the filter to its other threads once it has set the
// script's limits (releaseScript).
func installSeccomp(cfg *initConfig) error { return loadSeccomp(0, cfg.seccomp) }
