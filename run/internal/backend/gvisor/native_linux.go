//go:build linux && (amd64 || arm64)

package gvisor

import (
	"os"
	"runtime"

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
func etcView(p *backend.Spec) ([]initplan.EtcMask, []initplan.EtcFile) {
	if os.Geteuid() == 0 {
		return initplan.SandboxEtc(&p.Config, true, p.UID, p.GID)
	}
	return initplan.SandboxEtc(&p.Config, false, os.Geteuid(), os.Getegid())
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
