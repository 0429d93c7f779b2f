//go:build linux && (amd64 || arm64)

package seccomp

import (
	"slices"

	"golang.org/x/sys/unix"
)

// The filter as rules of an OCI runtime specification's linux.seccomp
// (config-linux.md), for a runtime that loads the filter itself: runsc
// --oci-seccomp, where gVisor's kernel enforces it. An OCI rule is one
// system call, an errno, and comparisons that must all hold, at most one
// per argument (runsc keeps the last of two on one argument), and runsc
// compiles the rules into one BPF program of at most 4096 instructions.
// So the filter's "not one of these values" becomes a rule per refused
// value up to the largest allowed one and a rule "greater than it"
// (notIn), of the whole 64-bit argument: where the filter reads an int
// argument's low word only, a value with a high word set is refused
// here whatever its low word (stricter; no C library sets it). Socket
// types are compared in their low four bits, the type proper: a type
// with other bits than SOCK_NONBLOCK and SOCK_CLOEXEC is refused by the
// kernel itself (EINVAL), where the filter answers EPERM.
// TestOCIRulesAgree checks that the rules refuse what the filter refuses,
// with its errno, and refuse more only where said here.

// OCIArg is one comparison of an OCI rule: the argument Index, masked
// by Value, equals ValueTwo (Op "SCMP_CMP_MASKED_EQ"), or is Value, is
// not Value, is greater than Value (Op "SCMP_CMP_EQ", "SCMP_CMP_NE",
// "SCMP_CMP_GT").
type OCIArg struct {
	Index    uint
	Value    uint64
	ValueTwo uint64
	Op       string
}

// OCIRule refuses the system call Name (number Nr) with Errno when all
// of Args hold.
type OCIRule struct {
	Name  string
	Nr    uint32
	Errno unix.Errno
	Args  []OCIArg
}

const (
	opMaskedEq = "SCMP_CMP_MASKED_EQ"
	opEq       = "SCMP_CMP_EQ"
	opNe       = "SCMP_CMP_NE"
	opGt       = "SCMP_CMP_GT"
	lowWord    = 0xffffffff
	sockType   = 0xf // the type proper in socket's type (SOCK_TYPE_MASK)
)

// ociRules collects rules; each rule call adds the cartesian product of
// its conditions (each a list of alternatives, one argument each).
type ociRules []OCIRule

func (r *ociRules) add(name string, nr uint32, errno unix.Errno, conds ...[]OCIArg) {
	rules := []OCIRule{{Name: name, Nr: nr, Errno: errno}}
	for _, alts := range conds {
		var next []OCIRule
		for _, rule := range rules {
			for _, a := range alts {
				next = append(next, OCIRule{Name: name, Nr: nr, Errno: errno, Args: append(append([]OCIArg(nil), rule.Args...), a)})
			}
		}
		rules = next
	}
	*r = append(*r, rules...)
}

// eq is the alternative "argument i is v".
func eq(i uint, v uint64) []OCIArg { return []OCIArg{{Index: i, Value: v, Op: opEq}} }

// eqLow is the alternative "argument i's low word is v", for an int
// argument tested where a high word would not refuse it otherwise.
func eqLow(i uint, v uint64) []OCIArg {
	return []OCIArg{{Index: i, Value: lowWord, ValueTwo: v, Op: opMaskedEq}}
}

// anyBit is the alternatives "argument i has one of the bits of mask".
func anyBit(i uint, mask uint64) []OCIArg {
	var out []OCIArg
	for b := 0; b < 64; b++ {
		if mask&(1<<b) != 0 {
			out = append(out, OCIArg{Index: i, Value: 1 << b, ValueTwo: 1 << b, Op: opMaskedEq})
		}
	}
	return out
}

// notIn is the alternatives "argument i is none of allowed": greater
// than the largest, or one of the smaller values not allowed.
func notIn(i uint, allowed ...uint64) []OCIArg {
	top := slices.Max(allowed)
	out := []OCIArg{{Index: i, Value: top, Op: opGt}}
	for v := uint64(0); v < top; v++ {
		if !slices.Contains(allowed, v) {
			out = append(out, eq(i, v)...)
		}
	}
	return out
}

// typeNotIn is the alternatives "socket's type (argument 1) is none of
// allowed", in its low four bits.
func typeNotIn(allowed ...uint64) []OCIArg {
	var out []OCIArg
	for v := uint64(0); v <= sockType; v++ {
		if !slices.Contains(allowed, v) {
			out = append(out, OCIArg{Index: 1, Value: sockType, ValueTwo: v, Op: opMaskedEq})
		}
	}
	return out
}

// OCIRules returns the rules of Filter(pol) (see the comment above).
// The architecture checks are the runtime's (linux.seccomp.architectures).
// pol.NotifyEpollAdd has no rule here: under gVisor the script's epoll
// watches are the sentry's, not the host kernel's.
func OCIRules(pol Policy) []OCIRule {
	var r ociRules
	for _, s := range deniedSyscalls() {
		r.add(s.name, s.nr, unix.EPERM)
	}
	for _, f := range []uint64{unix.CLONE_NEWUSER, unix.CLONE_NEWNS, unix.CLONE_NEWPID, unix.CLONE_NEWNET, unix.CLONE_NEWIPC, unix.CLONE_NEWUTS, unix.CLONE_NEWCGROUP} {
		r.add("clone", sysClone, unix.EPERM, anyBit(0, f))
	}
	r.add("clone3", sysClone3, unix.ENOSYS)
	r.add("ioctl", sysIoctl, unix.EPERM, append(eqLow(1, unix.TIOCSTI), eqLow(1, unix.TIOCLINUX)...))
	// personality: a low word other than 0 and 0xffffffff has a set bit
	// whose next bit (cyclically) is clear.
	var pers []OCIArg
	for b := 0; b < 32; b++ {
		next := (b + 1) % 32
		pers = append(pers, OCIArg{Index: 0, Value: 1<<b | 1<<next, ValueTwo: 1 << b, Op: opMaskedEq})
	}
	pers = append(pers, OCIArg{Index: 0, Value: lowWord, Op: opGt})
	r.add("personality", sysPersonality, unix.EPERM, pers)
	r.add("ptrace", unix.SYS_PTRACE, unix.EPERM, notIn(0, unix.PTRACE_TRACEME, unix.PTRACE_DETACH))
	r.add("prlimit64", unix.SYS_PRLIMIT64, unix.EPERM, []OCIArg{{Index: 0, Op: opNe}}, []OCIArg{{Index: 2, Op: opNe}})
	ociSocketRules(&r, pol)
	ociNamespaceRules(&r, pol)
	ociSetIDRules(&r)
	return r
}

// ociSocketRules are the rules of socketBlock, socketpairBlock,
// sendBlocks and execveat's.
func ociSocketRules(r *ociRules, pol Policy) {
	families := []uint64{afUnix, afInet, afInet6}
	if !pol.SharedNet {
		families = append(families, afNetlink)
	}
	r.add("socket", unix.SYS_SOCKET, unix.EAFNOSUPPORT, notIn(0, families...))
	if pol.NoMount {
		r.add("socket", unix.SYS_SOCKET, unix.EPERM, eq(0, afUnix))
	} else {
		r.add("socket", unix.SYS_SOCKET, unix.EPERM, eq(0, afUnix), typeNotIn(unix.SOCK_STREAM, unix.SOCK_DGRAM, unix.SOCK_SEQPACKET))
	}
	inetTypes := []uint64{unix.SOCK_STREAM}
	if !pol.HostNet {
		inetTypes = append(inetTypes, unix.SOCK_DGRAM)
	}
	for _, fam := range []uint64{afInet, afInet6} {
		r.add("socket", unix.SYS_SOCKET, unix.EPERM, eq(0, fam), typeNotIn(inetTypes...))
		for _, t := range inetTypes {
			proto := uint64(unix.IPPROTO_TCP)
			if t == unix.SOCK_DGRAM {
				proto = unix.IPPROTO_UDP
			}
			typ := []OCIArg{{Index: 1, Value: sockType, ValueTwo: t, Op: opMaskedEq}}
			r.add("socket", unix.SYS_SOCKET, unix.EPERM, eq(0, fam), typ, notIn(2, 0, proto))
		}
	}
	if !pol.SharedNet {
		r.add("socket", unix.SYS_SOCKET, unix.EAFNOSUPPORT, eq(0, afNetlink), []OCIArg{{Index: 2, Value: unix.NETLINK_ROUTE, Op: opNe}})
	}
	r.add("socketpair", unix.SYS_SOCKETPAIR, unix.EAFNOSUPPORT, []OCIArg{{Index: 0, Value: afUnix, Op: opNe}})
	pairTypes := []uint64{unix.SOCK_STREAM, unix.SOCK_SEQPACKET}
	if !pol.NoMount {
		pairTypes = append(pairTypes, unix.SOCK_DGRAM)
	}
	r.add("socketpair", unix.SYS_SOCKETPAIR, unix.EPERM, eq(0, afUnix), typeNotIn(pairTypes...))
	r.add("sendto", unix.SYS_SENDTO, unix.EPERM, anyBit(3, msgFastOpen))
	r.add("sendmmsg", unix.SYS_SENDMMSG, unix.EPERM, anyBit(3, msgFastOpen))
	r.add("sendmsg", unix.SYS_SENDMSG, unix.EPERM, anyBit(2, msgFastOpen))
	r.add("setsockopt", unix.SYS_SETSOCKOPT, unix.EPERM, eqLow(1, unix.IPPROTO_TCP), eqLow(2, tcpFOConnect))
	if pol.NoMemCgroup {
		var bufs []OCIArg
		for _, o := range []uint64{unix.SO_SNDBUF, unix.SO_RCVBUF, unix.SO_SNDBUFFORCE, unix.SO_RCVBUFFORCE} {
			bufs = append(bufs, eqLow(2, o)...)
		}
		r.add("setsockopt", unix.SYS_SETSOCKOPT, unix.EPERM, eqLow(1, unix.SOL_SOCKET), bufs)
	}
	r.add("execveat", unix.SYS_EXECVEAT, unix.EPERM, anyBit(4, atEmptyPath))
}

// ociNamespaceRules are the rules of namespaceBlocks.
func ociNamespaceRules(r *ociRules, pol Policy) {
	if pol.NoPID {
		r.add("setsid", unix.SYS_SETSID, unix.EPERM)
	}
	if pol.NoIPC {
		for _, nr := range ipcSyscalls() {
			r.add(sysName(nr), nr, unix.EPERM)
		}
	} else if pol.NoMemCgroup {
		r.add("shmget", unix.SYS_SHMGET, unix.EPERM)
	}
	if pol.NoMemCgroup {
		r.add("memfd_create", unix.SYS_MEMFD_CREATE, unix.ENOSYS)
	}
	if pol.NoQuotas {
		for _, nr := range append(archInotifyInit(), unix.SYS_INOTIFY_INIT1, unix.SYS_FANOTIFY_INIT) {
			r.add(sysName(nr), nr, unix.EMFILE)
		}
	}
}

// ociSetIDRules are the rules of setIDRules.
func ociSetIDRules(r *ociRules) {
	for _, c := range setIDCalls() {
		name := sysName(c.nr)
		mode := argIndex(c.mode)
		var conds [][]OCIArg
		if c.flags >= 0 {
			conds = append(conds, anyBit(argIndex(uint32(c.flags)), unix.O_CREAT|oTmpfile))
		}
		bad := anyBit(mode, setIDBits)
		if c.node {
			bad = append(bad, OCIArg{Index: mode, Value: unix.S_IFMT, ValueTwo: unix.S_IFCHR, Op: opMaskedEq},
				OCIArg{Index: mode, Value: unix.S_IFMT, ValueTwo: unix.S_IFBLK, Op: opMaskedEq})
		}
		r.add(name, c.nr, unix.EPERM, append(conds, bad)...)
	}
	r.add("openat2", unix.SYS_OPENAT2, unix.ENOSYS)
}

// argIndex is the index of the argument at offset off of seccomp_data.
func argIndex(off uint32) uint { return uint(off-seccompArg0) / 8 }

// sysName names the calls of ipcSyscalls, archInotifyInit and the
// set-id rules, for OCIRule.Name.
func sysName(nr uint32) string {
	names := map[uint32]string{
		unix.SYS_SHMGET: "shmget", unix.SYS_SHMAT: "shmat", unix.SYS_SHMCTL: "shmctl", unix.SYS_SHMDT: "shmdt",
		unix.SYS_SEMGET: "semget", unix.SYS_SEMOP: "semop", unix.SYS_SEMTIMEDOP: "semtimedop", unix.SYS_SEMCTL: "semctl",
		unix.SYS_MSGGET: "msgget", unix.SYS_MSGSND: "msgsnd", unix.SYS_MSGRCV: "msgrcv", unix.SYS_MSGCTL: "msgctl",
		unix.SYS_MQ_OPEN: "mq_open", unix.SYS_MQ_UNLINK: "mq_unlink", unix.SYS_MQ_TIMEDSEND: "mq_timedsend",
		unix.SYS_MQ_TIMEDRECEIVE: "mq_timedreceive", unix.SYS_MQ_NOTIFY: "mq_notify", unix.SYS_MQ_GETSETATTR: "mq_getsetattr",
		unix.SYS_INOTIFY_INIT1: "inotify_init1", unix.SYS_FANOTIFY_INIT: "fanotify_init",
		unix.SYS_FCHMOD: "fchmod", unix.SYS_FCHMODAT: "fchmodat", unix.SYS_FCHMODAT2: "fchmodat2",
		unix.SYS_OPENAT: "openat", unix.SYS_MKNODAT: "mknodat",
	}
	for _, s := range archSyscallNames() {
		names[s.nr] = s.name
	}
	return names[nr]
}
