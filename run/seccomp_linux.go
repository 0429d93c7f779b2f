package run

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filter is a deny-list: the script's interpreter needs a large
// and changing set of system calls, while the calls below serve only to
// attack or reconfigure the kernel, and none is needed by a skill.
//
//	system call(s)                                 result
//	---------------------------------------------  ------------------------
//	(wrong AUDIT_ARCH; on amd64 the x32 ABI)       process killed
//	ptrace other than PTRACE_TRACEME and           EPERM  (other processes' memory)
//	  PTRACE_DETACH; process_vm_readv,
//	  process_vm_writev
//	mount, umount2, pivot_root, chroot, fsopen,    EPERM  (file system layout)
//	  fsmount, fsconfig, fspick, move_mount,
//	  open_tree, mount_setattr
//	unshare, setns                                 EPERM  (new or foreign namespaces)
//	clone with CLONE_NEW{USER,NS,PID,NET,IPC,      EPERM  (same, through clone)
//	  UTS,CGROUP}
//	clone3                                         ENOSYS (flags are in memory, not
//	                                                       checkable: libc falls back to clone)
//	bpf, perf_event_open, userfaultfd,             EPERM  (large kernel attack surface)
//	  io_uring_setup, io_uring_enter,
//	  io_uring_register
//	keyctl, add_key, request_key                   EPERM  (kernel keyrings are not namespaced)
//	kexec_load, kexec_file_load, init_module,      EPERM  (kernel code)
//	  finit_module, delete_module, reboot
//	swapon, swapoff, acct, quotactl, syslog,       EPERM  (host-wide administration)
//	  vhangup, lookup_dcookie
//	settimeofday, clock_settime, clock_adjtime,    EPERM  (host clock)
//	  adjtimex
//	iopl, ioperm (amd64)                           EPERM  (hardware ports)
//	open_by_handle_at, name_to_handle_at           EPERM  (bypass path checks)
//	personality other than PER_LINUX or a query    EPERM  (e.g. ADDR_NO_RANDOMIZE)
//	ioctl TIOCSTI, TIOCLINUX                       EPERM  (type into a terminal)
//	prlimit64 setting another process's limits     EPERM  (the run's reaper; see spawnAndReap)
//	pidfd_getfd                                    EPERM  (another process's descriptors)
//	socket families and types, TCP Fast Open,      see seccomp_net_linux.go (some depend
//	  execveat of a descriptor, SysV IPC                    on the missing namespaces)
//	everything else                                allowed
//
// PTRACE_TRACEME is how the reaper starts the script stopped after execve
// to set its RLIMIT_AS (spawnAndReap); with PTRACE_DETACH it is all a
// tracer can do here, and a script can only make its own parent its
// tracer. Most of these already fail without capabilities; the filter is the layer
// that still holds where a capability or namespace layer is missing, and it
// removes kernel attack surface reachable without privileges.

// nsCloneFlags are the namespace flags refused in clone(2).
const nsCloneFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID |
	unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP

// Offsets in struct seccomp_data (little-endian: the low 32 bits of an
// argument come first).
const (
	seccompNr     = 0
	seccompArch   = 4
	seccompArg0   = 16
	seccompArg1   = 24
	seccompArg2   = 32
	perLinux      = 0
	perQuery      = 0xffffffff
	retKill       = unix.SECCOMP_RET_KILL_PROCESS
	retAllow      = unix.SECCOMP_RET_ALLOW
	retEPERM      = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	retENOSYS     = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	bpfLoadWord   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJumpEq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJumpGE     = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJumpSet    = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfReturn     = unix.BPF_RET | unix.BPF_K
	x32SyscallBit = 0x40000000
)

// sysno names a system call number for the filter.
type sysno struct {
	name string
	nr   uint32
}

func stmt(code uint16, k uint32) unix.SockFilter {
	return unix.SockFilter{Code: code, K: k}
}

func jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// seccompFilter assembles the program described above. Every block falls
// through to the next when its system call does not match, so all jumps
// are short.
func seccompFilter(pol seccompPolicy) ([]unix.SockFilter, error) {
	prog := []unix.SockFilter{
		stmt(bpfLoadWord, seccompArch),
		jump(bpfJumpEq, auditArch, 1, 0),
		stmt(bpfReturn, retKill),
		stmt(bpfLoadWord, seccompNr),
	}
	if checkX32 {
		prog = append(prog,
			jump(bpfJumpGE, x32SyscallBit, 0, 1),
			stmt(bpfReturn, retKill))
	}
	// clone: refuse namespace flags in the first argument.
	prog = append(prog,
		jump(bpfJumpEq, sysClone, 0, 4),
		stmt(bpfLoadWord, seccompArg0),
		jump(bpfJumpSet, nsCloneFlags, 0, 1),
		stmt(bpfReturn, retEPERM),
		stmt(bpfReturn, retAllow),
	)
	// ioctl: refuse pushing input into a terminal.
	prog = append(prog,
		jump(bpfJumpEq, sysIoctl, 0, 5),
		stmt(bpfLoadWord, seccompArg1),
		jump(bpfJumpEq, unix.TIOCSTI, 2, 0),
		jump(bpfJumpEq, unix.TIOCLINUX, 1, 0),
		stmt(bpfReturn, retAllow),
		stmt(bpfReturn, retEPERM),
	)
	// personality: only PER_LINUX and the query are allowed.
	prog = append(prog,
		jump(bpfJumpEq, sysPersonality, 0, 5),
		stmt(bpfLoadWord, seccompArg0),
		jump(bpfJumpEq, perLinux, 2, 0),
		jump(bpfJumpEq, perQuery, 1, 0),
		stmt(bpfReturn, retEPERM),
		stmt(bpfReturn, retAllow),
	)
	// ptrace: only PTRACE_TRACEME and PTRACE_DETACH (the request is a
	// long: its high word must be 0).
	prog = append(prog,
		jump(bpfJumpEq, unix.SYS_PTRACE, 0, 7),
		stmt(bpfLoadWord, seccompArg0+4),
		jump(bpfJumpEq, 0, 0, 3),
		stmt(bpfLoadWord, seccompArg0),
		jump(bpfJumpEq, unix.PTRACE_TRACEME, 2, 0),
		jump(bpfJumpEq, unix.PTRACE_DETACH, 1, 0),
		stmt(bpfReturn, retEPERM),
		stmt(bpfReturn, retAllow),
	)
	// prlimit64: setting the limits of another process is refused, so
	// that the reaper's (PID 1 and its threads, which have pids of their
	// own) are not the script's to lower (RLIMIT_CPU would get it
	// killed). Pid 0 (self, which setrlimit uses) and reading stay
	// allowed. The pid is an int: only its low word counts; the new
	// limit is a pointer: both words.
	prog = append(prog,
		jump(bpfJumpEq, unix.SYS_PRLIMIT64, 0, 8),
		stmt(bpfLoadWord, seccompArg0),
		jump(bpfJumpEq, 0, 5, 0),
		stmt(bpfLoadWord, seccompArg2),
		jump(bpfJumpEq, 0, 0, 2),
		stmt(bpfLoadWord, seccompArg2+4),
		jump(bpfJumpEq, 0, 1, 0),
		stmt(bpfReturn, retEPERM),
		stmt(bpfReturn, retAllow),
	)
	prog = append(prog,
		jump(bpfJumpEq, sysClone3, 0, 1),
		stmt(bpfReturn, retENOSYS),
	)
	blocks, err := policyFilter(pol)
	if err != nil {
		return nil, err
	}
	prog = append(prog, blocks...)
	for _, s := range deniedSyscalls() {
		prog = append(prog,
			jump(bpfJumpEq, s.nr, 0, 1),
			stmt(bpfReturn, retEPERM))
	}
	return append(prog, stmt(bpfReturn, retAllow)), nil
}

// loadSeccomp loads the filter with seccomp(2) and the given flags.
func loadSeccomp(flags uintptr, pol seccompPolicy) error {
	if !seccompSupported {
		return fmt.Errorf("no seccomp filter for this architecture")
	}
	filter, err := seccompFilter(pol)
	if err != nil {
		return err
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	switch {
	case errno != 0:
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %v", errno)
	case r != 0:
		// With TSYNC, the id of a thread that could not be synced.
		return fmt.Errorf("seccomp(SECCOMP_FILTER_FLAG_TSYNC): thread %d not synced", r)
	}
	return nil
}
