//go:build linux && (amd64 || arm64)

package seccomp

import "golang.org/x/sys/unix"

// deniedSyscalls lists the calls that fail with EPERM (see seccomp_linux.go):
// the calls both supported architectures have, then archDeniedSyscalls.
func deniedSyscalls() []sysno {
	return append([]sysno{
		{"process_vm_readv", unix.SYS_PROCESS_VM_READV},
		{"process_vm_writev", unix.SYS_PROCESS_VM_WRITEV},
		{"pidfd_getfd", unix.SYS_PIDFD_GETFD},
		{"mount", unix.SYS_MOUNT},
		{"umount2", unix.SYS_UMOUNT2},
		{"pivot_root", unix.SYS_PIVOT_ROOT},
		{"chroot", unix.SYS_CHROOT},
		{"fsopen", unix.SYS_FSOPEN},
		{"fsmount", unix.SYS_FSMOUNT},
		{"fsconfig", unix.SYS_FSCONFIG},
		{"fspick", unix.SYS_FSPICK},
		{"move_mount", unix.SYS_MOVE_MOUNT},
		{"open_tree", unix.SYS_OPEN_TREE},
		{"mount_setattr", unix.SYS_MOUNT_SETATTR},
		{"unshare", unix.SYS_UNSHARE},
		{"setns", unix.SYS_SETNS},
		{"bpf", unix.SYS_BPF},
		{"perf_event_open", unix.SYS_PERF_EVENT_OPEN},
		{"userfaultfd", unix.SYS_USERFAULTFD},
		{"io_uring_setup", unix.SYS_IO_URING_SETUP},
		{"io_uring_enter", unix.SYS_IO_URING_ENTER},
		{"io_uring_register", unix.SYS_IO_URING_REGISTER},
		{"keyctl", unix.SYS_KEYCTL},
		{"add_key", unix.SYS_ADD_KEY},
		{"request_key", unix.SYS_REQUEST_KEY},
		{"kexec_load", unix.SYS_KEXEC_LOAD},
		{"kexec_file_load", unix.SYS_KEXEC_FILE_LOAD},
		{"init_module", unix.SYS_INIT_MODULE},
		{"finit_module", unix.SYS_FINIT_MODULE},
		{"delete_module", unix.SYS_DELETE_MODULE},
		{"reboot", unix.SYS_REBOOT},
		{"swapon", unix.SYS_SWAPON},
		{"swapoff", unix.SYS_SWAPOFF},
		{"acct", unix.SYS_ACCT},
		{"quotactl", unix.SYS_QUOTACTL},
		{"syslog", unix.SYS_SYSLOG},
		{"vhangup", unix.SYS_VHANGUP},
		{"lookup_dcookie", unix.SYS_LOOKUP_DCOOKIE},
		{"settimeofday", unix.SYS_SETTIMEOFDAY},
		{"clock_settime", unix.SYS_CLOCK_SETTIME},
		{"clock_adjtime", unix.SYS_CLOCK_ADJTIME},
		{"adjtimex", unix.SYS_ADJTIMEX},
		{"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT},
		{"name_to_handle_at", unix.SYS_NAME_TO_HANDLE_AT},
	}, archDeniedSyscalls()...)
}
