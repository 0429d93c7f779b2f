package seccomp

import "golang.org/x/sys/unix"

// Architecture constants of the seccomp filter for amd64.
const (
	seccompSupported = true
	auditArch        = unix.AUDIT_ARCH_X86_64
	checkX32         = true // x32 system calls share the arch value: refuse them by number
	sysClone         = unix.SYS_CLONE
	sysClone3        = unix.SYS_CLONE3
	sysIoctl         = unix.SYS_IOCTL
	sysPersonality   = unix.SYS_PERSONALITY
)

// archDeniedSyscalls lists denied calls that exist only on amd64:
// hardware ports, and modify_ldt (16-bit segments, for Wine and DOS
// emulators; a long history of kernel bugs).
func archDeniedSyscalls() []sysno {
	return []sysno{
		{"iopl", unix.SYS_IOPL},
		{"ioperm", unix.SYS_IOPERM},
		{"modify_ldt", unix.SYS_MODIFY_LDT},
	}
}

// archInotifyInit is inotify_init, which arm64 lacks (inotify_init1 only).
func archInotifyInit() []uint32 { return []uint32{unix.SYS_INOTIFY_INIT} }
