package seccomp

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

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
//	prlimit64 setting another process's limits     EPERM  (the run's init process, PID 1)
//	pidfd_getfd                                    EPERM  (another process's descriptors)
//	set-id modes, device nodes, openat2            see seccomp_setid_linux.go
//	inotify_init(1), fanotify_init where the       EMFILE (counters shared with the
//	  user namespace cannot cap them                        caller, see Policy.NoQuotas)
//	epoll_ctl EPOLL_CTL_ADD where the run's uid   user notification: the supervisor
//	  is shared (Policy.NotifyEpollAdd)                    counts it (CONTINUE or ENOSPC)
//	socket families and types, TCP Fast Open,      see seccomp_net_linux.go (some depend
//	  execveat of a descriptor, SysV IPC                    on the missing namespaces)
//	everything else                                allowed
//
// PTRACE_TRACEME and PTRACE_DETACH are all a tracer can do here, and a
// script can only make its own parent its tracer (the init process
// detaches such a child at once, see initproc's childReap). Most of these already fail without capabilities; the filter is the layer
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
	BpfLoadWord   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	BpfJumpEq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJumpGE     = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJumpSet    = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfJumpAlways = unix.BPF_JMP | unix.BPF_JA
	BpfReturn     = unix.BPF_RET | unix.BPF_K
	x32SyscallBit = 0x40000000
)

// sysno names a system call number for the filter.
type sysno struct {
	name string
	nr   uint32
}

// Stmt is a BPF statement without jumps (BPF_STMT).
func Stmt(code uint16, k uint32) unix.SockFilter {
	return unix.SockFilter{Code: code, K: k}
}

// Jump is a BPF conditional jump (BPF_JUMP).
func Jump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// block is the filter's rule for one system call: body runs when the
// call's number is nr (the accumulator holds it on entry), jumps only
// within itself and ends every path with a return.
type block struct {
	nr   uint32
	body []unix.SockFilter
}

// Filter assembles the program described above: the architecture checks,
// then the blocks (rules), found by the system call's number in a binary
// search (dispatch), and "allow" for every call without a block.
func Filter(pol Policy) ([]unix.SockFilter, error) {
	if !seccompSupported {
		return nil, ErrUnsupported
	}
	prog := []unix.SockFilter{
		Stmt(BpfLoadWord, seccompArch),
		Jump(BpfJumpEq, auditArch, 1, 0),
		Stmt(BpfReturn, retKill),
		Stmt(BpfLoadWord, seccompNr),
	}
	if checkX32 {
		prog = append(prog,
			Jump(bpfJumpGE, x32SyscallBit, 0, 1),
			Stmt(BpfReturn, retKill))
	}
	bs, err := rules(pol)
	if err != nil {
		return nil, err
	}
	tree, err := dispatch(bs)
	if err != nil {
		return nil, err
	}
	return append(prog, tree...), nil
}

// rules lists the blocks of the table above; for a number with more than
// one, the first counts.
func rules(pol Policy) ([]block, error) {
	bs := []block{
		// clone: refuse namespace flags in the first argument.
		{sysClone, []unix.SockFilter{
			Stmt(BpfLoadWord, seccompArg0),
			Jump(bpfJumpSet, nsCloneFlags, 0, 1),
			Stmt(BpfReturn, retEPERM),
			Stmt(BpfReturn, retAllow),
		}},
		// ioctl: refuse pushing input into a terminal.
		{sysIoctl, []unix.SockFilter{
			Stmt(BpfLoadWord, seccompArg1),
			Jump(BpfJumpEq, unix.TIOCSTI, 2, 0),
			Jump(BpfJumpEq, unix.TIOCLINUX, 1, 0),
			Stmt(BpfReturn, retAllow),
			Stmt(BpfReturn, retEPERM),
		}},
		// personality: only PER_LINUX and the query are allowed.
		{sysPersonality, []unix.SockFilter{
			Stmt(BpfLoadWord, seccompArg0),
			Jump(BpfJumpEq, perLinux, 2, 0),
			Jump(BpfJumpEq, perQuery, 1, 0),
			Stmt(BpfReturn, retEPERM),
			Stmt(BpfReturn, retAllow),
		}},
		// ptrace: only PTRACE_TRACEME and PTRACE_DETACH (the request is a
		// long: its high word must be 0).
		{unix.SYS_PTRACE, []unix.SockFilter{
			Stmt(BpfLoadWord, seccompArg0+4),
			Jump(BpfJumpEq, 0, 0, 3),
			Stmt(BpfLoadWord, seccompArg0),
			Jump(BpfJumpEq, unix.PTRACE_TRACEME, 2, 0),
			Jump(BpfJumpEq, unix.PTRACE_DETACH, 1, 0),
			Stmt(BpfReturn, retEPERM),
			Stmt(BpfReturn, retAllow),
		}},
		// prlimit64: setting the limits of another process is refused, so
		// that the init process's (PID 1 and its threads, which have pids
		// of their own) are not the script's to lower (RLIMIT_CPU would get
		// it killed). Pid 0 (self, which setrlimit uses) and reading stay
		// allowed. The pid is an int: only its low word counts; the new
		// limit is a pointer: both words.
		{unix.SYS_PRLIMIT64, []unix.SockFilter{
			Stmt(BpfLoadWord, seccompArg0),
			Jump(BpfJumpEq, 0, 5, 0),
			Stmt(BpfLoadWord, seccompArg2),
			Jump(BpfJumpEq, 0, 0, 2),
			Stmt(BpfLoadWord, seccompArg2+4),
			Jump(BpfJumpEq, 0, 1, 0),
			Stmt(BpfReturn, retEPERM),
			Stmt(BpfReturn, retAllow),
		}},
		{sysClone3, []unix.SockFilter{Stmt(BpfReturn, retENOSYS)}},
	}
	policy, err := policyFilter(pol)
	if err != nil {
		return nil, err
	}
	bs = append(bs, policy...)
	setID, err := setIDRules()
	if err != nil {
		return nil, err
	}
	bs = append(bs, setID...)
	for _, s := range deniedSyscalls() {
		bs = append(bs, block{s.nr, []unix.SockFilter{Stmt(BpfReturn, retEPERM)}})
	}
	return bs, nil
}

// dispatchLeaf is how many blocks a leaf of dispatch's search tests one
// after the other.
const dispatchLeaf = 4

// dispatch assembles the blocks behind a binary search on the system
// call number (in the accumulator): a call is compared with about log2 of
// the number of blocks, where one comparison per block made the kernel
// check some 200 instructions for every call it allows (at each load,
// where it finds out which calls the filter always allows, about 0.1 ms,
// and at each call it cannot skip). The result is the same as testing
// the blocks in order and allowing a call none has.
func dispatch(bs []block) ([]unix.SockFilter, error) {
	return searchTree(byNumber(bs))
}

// byNumber returns bs sorted by system call number, each number once: its
// first block, which is the one testing the blocks in order reaches.
func byNumber(bs []block) []block {
	seen := map[uint32]bool{}
	var sorted []block
	for _, b := range bs {
		if !seen[b.nr] {
			seen[b.nr] = true
			sorted = append(sorted, b)
		}
	}
	slices.SortFunc(sorted, func(a, b block) int { return cmp.Compare(a.nr, b.nr) })
	return sorted
}

// searchTree assembles the search over bs (sorted by number, each number
// once) into one slice of the size it needs (treeLen): the filter is
// built on every start, and slices per subtree, copied at each level,
// cost a CLI call some 30 page faults of fresh memory.
func searchTree(bs []block) ([]unix.SockFilter, error) {
	for _, b := range bs {
		if len(b.body) > 255 {
			return nil, fmt.Errorf("seccomp: the block of system call %d is too long (%d instructions)", b.nr, len(b.body))
		}
	}
	return appendTree(make([]unix.SockFilter, 0, treeLen(bs)), bs), nil
}

// treeLen is the number of instructions of the search over bs.
func treeLen(bs []block) int {
	if len(bs) <= dispatchLeaf {
		n := 1 // the final allow
		for _, b := range bs {
			n += 1 + len(b.body)
		}
		return n
	}
	mid := len(bs) / 2
	return 2 + treeLen(bs[:mid]) + treeLen(bs[mid:])
}

// appendTree appends the search over bs to out: up to dispatchLeaf blocks
// one after the other, each behind the test of its number and ending in
// an allow; more split at the middle number, the lower half first.
func appendTree(out []unix.SockFilter, bs []block) []unix.SockFilter {
	if len(bs) <= dispatchLeaf {
		for _, b := range bs {
			out = append(out, Jump(BpfJumpEq, b.nr, 0, uint8(len(b.body))))
			out = append(out, b.body...)
		}
		return append(out, Stmt(BpfReturn, retAllow))
	}
	mid := len(bs) / 2
	// nr >= bs[mid].nr: on to the jump over the lower half, which is
	// filled in once that half is appended.
	over := len(out) + 1
	out = append(out,
		Jump(bpfJumpGE, bs[mid].nr, 0, 1),
		Stmt(bpfJumpAlways, 0))
	out = appendTree(out, bs[:mid])
	out[over].K = uint32(len(out) - over - 1)
	return appendTree(out, bs[mid:])
}

// ErrUnsupported is Filter's error on an architecture this package has
// no filter for.
var ErrUnsupported = errors.New("no seccomp filter for this architecture")
