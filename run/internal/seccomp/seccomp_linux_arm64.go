package seccomp

import "golang.org/x/sys/unix"

// Architecture constants of the seccomp filter for arm64.
const (
	seccompSupported = true
	auditArch        = unix.AUDIT_ARCH_AARCH64
	checkX32         = false
	sysClone         = unix.SYS_CLONE
	sysClone3        = unix.SYS_CLONE3
	sysIoctl         = unix.SYS_IOCTL
	sysPersonality   = unix.SYS_PERSONALITY
)

// archDeniedSyscalls lists denied calls that exist only on arm64: none.
func archDeniedSyscalls() []sysno { return nil }

// archSetIDCalls: arm64 has only the *at forms of the calls setIDRules
// tests.
func archSetIDCalls() []modeCall { return nil }

// archInotifyInit: arm64 has inotify_init1 only.
func archInotifyInit() []uint32 { return nil }

// archSyscallNames names the calls only arm64 has that the rules test
// (for OCIRules): none.
func archSyscallNames() []sysno { return nil }
