//go:build linux && (amd64 || arm64)

package gvisor

import (
	"fmt"
	"os"
	"runtime"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/initplan"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"
)

// etcView is what the native backend shows over the host's /etc for p's
// run (initplan.SandboxEtc): the masks of the entries that hold secrets
// or describe the host and its accounts (passwd, group, hostname, ...)
// and the sandbox's own files (its /etc/hosts). The reader is the
// script's identity as gVisor checks it against the host's owners and
// modes: with root, the run's uid and gid; rootless, the caller (the
// gofer serves files as the caller, who is root in the sandbox).
//
// A root caller's script is uid p.UID of gVisor's kernel, which no
// account names: natively it is root of its user namespace, which the C
// library's systemd module names with /etc/passwd masked empty. So the
// sandbox gets its own passwd and group naming that identity alone, its
// home the work folder: LibreOffice, for one, starts only when
// getpwuid names its user ("User installation could not be completed").
// Rootless, the script is uid 0 of the sandbox and named as natively.
func etcView(p *backend.Spec) ([]initplan.EtcMask, []initplan.EtcFile) {
	if os.Geteuid() != 0 {
		return initplan.SandboxEtc(&p.Config, false, os.Geteuid(), os.Getegid())
	}
	masks, files := initplan.SandboxEtc(&p.Config, true, p.UID, p.GID)
	for _, f := range []initplan.EtcFile{
		{Path: "/etc/group", Data: fmt.Sprintf("sandbox:x:%d:\n", p.GID)},
		{Path: "/etc/passwd", Data: fmt.Sprintf("sandbox:x:%d:%d:skill-sandbox:%s:/bin/sh\n", p.UID, p.GID, p.Config.WorkDir)},
	} {
		if fi, err := os.Lstat(f.Path); err == nil && fi.Mode().IsRegular() && !slices.ContainsFunc(files, func(o initplan.EtcFile) bool { return o.Path == f.Path }) {
			files = append(files, f)
		}
	}
	return masks, files
}

// seccompSection is the bundle's linux.seccomp: the native backend's
// filter (seccomp.OCIRules), which runsc --oci-seccomp loads in gVisor's
// kernel, so the script meets the same refusals there (ptrace, unshare,
// namespace flags of clone, raw and ICMP sockets, ...). The policy is the
// one of a native run with every namespace: gVisor gives the sandbox its
// own PID, IPC, mount and network namespaces (the host's network with
// AllowNetwork).
func seccompSection(p *backend.Spec) *ociSeccomp {
	// NoMemCgroup stays false: its memfd_create refusal is an ENOSYS
	// rule, which runsc cannot answer (below), and its other refusals
	// alone would not bound what rootless runsc leaves uncapped
	// (docs/backends.md).
	pol := seccomp.Policy{SharedNet: p.Config.AllowNetwork}
	arch := "SCMP_ARCH_X86_64"
	if runtime.GOARCH == "arm64" {
		arch = "SCMP_ARCH_AARCH64"
	}
	s := &ociSeccomp{DefaultAction: "SCMP_ACT_ALLOW", Architectures: []string{arch}}
	for _, r := range seccomp.OCIRules(pol) {
		if r.Errno == unix.ENOSYS {
			// runsc 20221219 answers every rule EPERM (it ignores
			// errnoRet), and the C library falls back from clone3 and
			// openat2 to clone and openat only on ENOSYS: with EPERM no
			// thread starts. gVisor's kernel has neither call and
			// answers ENOSYS itself (TestGVisorHardening).
			continue
		}
		if r.Name == "syslog" {
			// The kernel log gVisor's kernel shows is its own (its boot
			// lines), nothing of the host's: left readable, it is the
			// proof a script met that kernel (attack probe 41).
			continue
		}
		errno := uint(r.Errno)
		sc := ociSyscall{Names: []string{r.Name}, Action: "SCMP_ACT_ERRNO", ErrnoRet: &errno}
		for _, a := range r.Args {
			sc.Args = append(sc.Args, ociSeccompArg{Index: a.Index, Value: a.Value, ValueTwo: a.ValueTwo, Op: a.Op})
		}
		s.Syscalls = append(s.Syscalls, sc)
	}
	return s
}
