package main

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// benchDenied are the system calls the bench's seccomp filter refuses
// with EPERM: the usual container denylist of the calls that reach
// kernel surfaces a script has no use for (the same families as
// skill-sandbox's own denylist: mounts, namespaces, BPF, perf, keys,
// modules, io_uring, other processes' memory, hardware ports).
func benchDenied() []uint32 {
	return []uint32{
		unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_PIDFD_GETFD,
		unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
		unix.SYS_FSOPEN, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_FSPICK,
		unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_MOUNT_SETATTR,
		unix.SYS_UNSHARE, unix.SYS_SETNS, unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN,
		unix.SYS_USERFAULTFD, unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER,
		unix.SYS_IO_URING_REGISTER, unix.SYS_KEYCTL, unix.SYS_ADD_KEY,
		unix.SYS_REQUEST_KEY, unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
		unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
		unix.SYS_ACCT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT,
		unix.SYS_SYSLOG, unix.SYS_QUOTACTL, unix.SYS_OPEN_BY_HANDLE_AT,
		unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_FANOTIFY_INIT, unix.SYS_LOOKUP_DCOOKIE,
		unix.SYS_KCMP, unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_MODIFY_LDT,
		unix.SYS_USELIB, unix.SYS_PTRACE,
	}
}

// BPF opcodes and seccomp return values of the filter (linux/filter.h,
// linux/seccomp.h).
const (
	bpfLdAbsW       = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeqK         = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJgeK         = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfRetK         = unix.BPF_RET | unix.BPF_K
	seccompRetAllow = 0x7fff0000
	seccompRetKill  = 0x80000000 // SECCOMP_RET_KILL_PROCESS
	seccompRetErrno = 0x00050000
	x32SyscallBit   = 0x40000000
)

// benchFilter is the seccomp program bwrap --seccomp loads for the
// bench's "matched + seccomp" configuration, as struct sock_filter
// entries in the machine's byte order: kill another architecture and x32
// calls, refuse benchDenied with EPERM, one comparison after the other,
// allow the rest. A linear list costs each system call more comparisons
// than skill-sandbox's binary search, so the filter does not flatter
// bubblewrap.
func benchFilter() ([]byte, error) {
	denied := benchDenied()
	n := len(denied)
	prog := []unix.SockFilter{
		{Code: bpfLdAbsW, K: 4}, // seccomp_data.arch
		{Code: bpfJeqK, K: unix.AUDIT_ARCH_X86_64, Jt: 1},
		{Code: bpfRetK, K: seccompRetKill},
		{Code: bpfLdAbsW, K: 0}, // seccomp_data.nr
		{Code: bpfJgeK, K: x32SyscallBit, Jf: 1},
		{Code: bpfRetK, K: seccompRetKill},
	}
	for i, nr := range denied {
		// Past the remaining comparisons and the allow: the EPERM return.
		prog = append(prog, unix.SockFilter{Code: bpfJeqK, K: nr, Jt: uint8(n - i)})
	}
	prog = append(prog, unix.SockFilter{Code: bpfRetK, K: seccompRetAllow},
		unix.SockFilter{Code: bpfRetK, K: seccompRetErrno | uint32(unix.EPERM)})
	out := make([]byte, 0, 8*len(prog))
	for _, f := range prog {
		out = binary.NativeEndian.AppendUint16(out, f.Code)
		out = append(out, f.Jt, f.Jf)
		out = binary.NativeEndian.AppendUint32(out, f.K)
	}
	return out, nil
}
