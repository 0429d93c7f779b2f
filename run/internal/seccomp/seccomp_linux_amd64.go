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

// archSetIDCalls lists the calls with a mode argument that only amd64
// has (see setIDRules); arm64 has only their *at forms.
func archSetIDCalls() []modeCall {
	return []modeCall{
		{nr: unix.SYS_CHMOD, mode: seccompArg1, flags: -1},
		{nr: unix.SYS_CREAT, mode: seccompArg1, flags: -1},
		{nr: unix.SYS_OPEN, mode: seccompArg2, flags: seccompArg1},
		{nr: unix.SYS_MKNOD, mode: seccompArg1, flags: -1, node: true},
	}
}

// archInotifyInit is inotify_init, which arm64 lacks (inotify_init1 only).
func archInotifyInit() []uint32 { return []uint32{unix.SYS_INOTIFY_INIT} }

// archSyscallNames names the calls only amd64 has that the rules test
// (for OCIRules).
func archSyscallNames() []sysno {
	return []sysno{
		{"inotify_init", unix.SYS_INOTIFY_INIT}, {"chmod", unix.SYS_CHMOD},
		{"creat", unix.SYS_CREAT}, {"open", unix.SYS_OPEN}, {"mknod", unix.SYS_MKNOD},
	}
}
