package posix

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// The kernel's own words for a refused user namespace mislead: with
// user.max_user_namespaces set to 0, clone(CLONE_NEWUSER) fails with
// ENOSPC, "no space left on device". The functions here find the real cause
// from the sysctls and the process's own seccomp state, and say how to fix
// it.

// hostFacts are the settings that decide whether this process may create a
// user namespace.
type hostFacts struct {
	root             bool   // effective uid 0 (CAP_SYS_ADMIN in the initial namespace)
	maxUserNS        string // user.max_user_namespaces; "" when unreadable
	unprivClone      string // kernel.unprivileged_userns_clone (Debian); "" when absent
	apparmorRestrict string // kernel.apparmor_restrict_unprivileged_userns (Ubuntu); "" when absent
	seccompFilter    bool   // this process runs under a seccomp filter (a container's profile)
}

// ReadHostFacts reads hostFacts under procRoot (normally "/proc").
func ReadHostFacts(procRoot string) hostFacts {
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(procRoot, rel))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	mode, _ := proc.StatusValue(filepath.Join(procRoot, "self/status"), "Seccomp:")
	return hostFacts{
		root:             os.Geteuid() == 0,
		maxUserNS:        read("sys/user/max_user_namespaces"),
		unprivClone:      read("sys/kernel/unprivileged_userns_clone"),
		apparmorRestrict: read("sys/kernel/apparmor_restrict_unprivileged_userns"),
		seccompFilter:    mode == "2",
	}
}

// UserNSCause explains why clone(CLONE_NEWUSER) failed with err, and how
// to fix it.
func UserNSCause(err error, f hostFacts) string {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return fmt.Sprintf("user namespaces unavailable: %v", err)
	}
	name := unix.ErrnoName(errno)
	if name == "" {
		name = fmt.Sprintf("errno %d", int(errno))
	}
	var why, fix string
	switch {
	case f.maxUserNS == "0":
		why = "disabled by the sysctl user.max_user_namespaces = 0 (clone failed with " + name + `, which the kernel words as "` + errno.Error() + `")`
		fix = "as root, sysctl -w user.max_user_namespaces=15000 (and keep it in /etc/sysctl.d/)"
	case errno == unix.ENOSPC:
		why = "the limit user.max_user_namespaces = " + f.maxUserNS + " is used up (clone failed with ENOSPC)"
		fix = "raise the sysctl as root, or end the processes holding user namespaces"
	case errno == unix.EUSERS:
		why = "this process is already 32 user namespaces deep, the kernel's nesting limit (clone failed with EUSERS)"
		fix = "run skill-sandbox from a less deeply nested container"
	case errno == unix.ENOSYS || errno == unix.EINVAL:
		why = "the kernel has no user namespace support (built without CONFIG_USER_NS, or too old; clone failed with " + name + ")"
		fix = "use a kernel with CONFIG_USER_NS=y"
	case (errno == unix.EPERM || errno == unix.EACCES) && !f.root && f.unprivClone == "0":
		why = "disabled for unprivileged users by the sysctl kernel.unprivileged_userns_clone = 0 (clone failed with " + name + ")"
		fix = "as root, sysctl -w kernel.unprivileged_userns_clone=1"
	case (errno == unix.EPERM || errno == unix.EACCES) && !f.root && f.apparmorRestrict == "1":
		why = apparmorWhy + " (clone failed with " + name + ")"
		fix = apparmorFix
	case (errno == unix.EPERM || errno == unix.EACCES) && f.seccompFilter:
		why = "refused by the seccomp filter this process runs under, as a container runtime's default profile does (Docker, Kubernetes RuntimeDefault; clone failed with " + name + ")"
		fix = "run the container with a seccomp profile that allows clone(CLONE_NEWUSER) and unshare, e.g. docker run --security-opt seccomp=PROFILE"
	default:
		why = "clone(CLONE_NEWUSER) failed with " + name + " although no sysctl forbids it: a security module (SELinux, AppArmor) or a chroot may refuse it"
		fix = "check the audit log of the security module (dmesg)"
	}
	return "user namespaces unavailable: " + why + "; fix: " + fix
}

// The AppArmor restriction of Ubuntu 23.10+ lets an unconfined program
// create a user namespace but takes every capability inside it away (or,
// with the _force variant, refuses the clone); a profile that grants
// "userns," lifts it for one program.
const (
	apparmorWhy = "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1, Ubuntu 23.10+)"
	apparmorFix = "install the AppArmor profile from packaging/apparmor/ (README: AppArmor), or as root sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
)

// ExplainMissing adds the cause to namespace layers that failed inside a
// user namespace that was created but holds no capabilities, which is
// what AppArmor's restriction does (mount and sethostname fail with
// EPERM).
func ExplainMissing(missing []stageconfig.Missing) []stageconfig.Missing {
	f := hostFacts{}
	read := false
	for i, m := range missing {
		if m.Layer != stageconfig.LayerMountNS && m.Layer != stageconfig.LayerUTSNS {
			continue
		}
		if !strings.Contains(m.Reason, unix.EPERM.Error()) {
			continue
		}
		if !read {
			f, read = ReadHostFacts("/proc"), true
		}
		if !f.root && f.apparmorRestrict == "1" {
			missing[i].Reason = m.Reason + "; " + apparmorWhy + "; fix: " + apparmorFix
		}
	}
	return missing
}
