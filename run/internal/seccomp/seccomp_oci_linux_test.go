//go:build linux && (amd64 || arm64)

package seccomp

import (
	"math/rand"
	"testing"

	"golang.org/x/sys/unix"
)

// ociDecide is what the rules decide for the call nr with args: the
// errno of the rules that match (all must agree), or allow.
func ociDecide(t *testing.T, rules []OCIRule, nr uint32, args [6]uint64) uint32 {
	t.Helper()
	ret := uint32(retAllow)
	for _, r := range rules {
		if r.Nr != nr || !ociMatch(r.Args, args) {
			continue
		}
		got := unix.SECCOMP_RET_ERRNO | uint32(r.Errno)
		if ret != retAllow && ret != got {
			t.Fatalf("call %d args %#x: rules disagree (%#x, %#x)", nr, args, ret, got)
		}
		ret = got
	}
	return ret
}

// ociMatch reports whether all comparisons hold, as a runtime applies them.
func ociMatch(as []OCIArg, args [6]uint64) bool {
	for _, a := range as {
		v := args[a.Index]
		switch a.Op {
		case opMaskedEq:
			if v&a.Value != a.ValueTwo {
				return false
			}
		case opEq:
			if v != a.Value {
				return false
			}
		case opNe:
			if v == a.Value {
				return false
			}
		case opGt:
			if v <= a.Value {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// TestOCIRulesAgree checks that the OCI rules refuse what the native
// filter refuses, with the same errno, for every policy, on arguments
// drawn from the values the filter tests and random ones.
func TestOCIRulesAgree(t *testing.T) {
	values := []uint64{0, 1, 2, 3, 4, 5, 6, 7, 10, 16, 17, 18, 31, 33, 44, 64, 262,
		unix.SOCK_NONBLOCK, unix.SOCK_CLOEXEC, unix.SOCK_STREAM | unix.SOCK_NONBLOCK, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC,
		unix.SOCK_RAW, unix.IPPROTO_ICMP, unix.IPPROTO_ICMPV6, unix.IPPROTO_UDP, unix.IPPROTO_TCP,
		unix.S_ISUID | 0o755, unix.S_ISGID, unix.S_IFCHR | 0o600, unix.S_IFBLK, unix.S_IFREG | 0o644, unix.S_IFIFO,
		unix.O_CREAT, unix.O_TMPFILE, unix.O_RDWR, unix.MSG_FASTOPEN, unix.AT_EMPTY_PATH, unix.TIOCSTI, unix.TIOCLINUX,
		0xffffffff, 0xfffffffe, 1 << 32, 1<<32 | 17, 1<<32 | 2, unix.CLONE_NEWUSER, unix.CLONE_NEWNS | 17,
		unix.CLONE_NEWNET, unix.CLONE_VM | unix.CLONE_THREAD, unix.TCP_FASTOPEN_CONNECT, unix.SOL_SOCKET,
		unix.SO_SNDBUF, unix.SO_RCVBUFFORCE, unix.PTRACE_ATTACH, unix.PTRACE_TRACEME, unix.PTRACE_DETACH, unix.PTRACE_SEIZE,
		0x0040000, unix.NETLINK_ROUTE, unix.NETLINK_AUDIT}
	rnd := rand.New(rand.NewSource(1))
	for _, pol := range allPolicies() {
		if pol.NotifyEpollAdd {
			continue // not an OCI rule (see OCIRules)
		}
		prog, err := Filter(pol)
		if err != nil {
			t.Fatal(err)
		}
		rules := OCIRules(pol)
		nrs := map[uint32]bool{unix.SYS_READ: true, unix.SYS_GETPID: true}
		for _, r := range rules {
			if r.Name == "" {
				t.Fatalf("rule of call %d has no name", r.Nr)
			}
			nrs[r.Nr] = true
		}
		bs, err := rules2blocks(pol)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if !nrs[b.nr] {
				t.Fatalf("%+v: the filter tests call %d, no OCI rule names it", pol, b.nr)
			}
		}
		for nr := range nrs {
			for n := 0; n < 150; n++ {
				var args [6]uint64
				for i := range args {
					if rnd.Intn(8) == 0 {
						args[i] = rnd.Uint64() >> uint(32+rnd.Intn(32))
					} else {
						args[i] = values[rnd.Intn(len(values))] & lowWord
					}
				}
				want, got := decideBoth(t, prog, rules, nr, args)
				if got != want && !kernelRefuses(nr, args) {
					t.Fatalf("%+v: call %d args %#x: OCI rules %#x, filter %#x", pol, nr, args, got, want)
				}
				// A high word: the rules may refuse more, never less.
				args[rnd.Intn(6)] |= uint64(1+rnd.Intn(7)) << 32
				if want, got := decideBoth(t, prog, rules, nr, args); want != retAllow && got == retAllow && !kernelRefuses(nr, args) {
					t.Fatalf("%+v: call %d args %#x: OCI rules allow, filter %#x", pol, nr, args, want)
				}
			}
		}
	}
}

// decideBoth is what the filter and the rules decide for the call.
func decideBoth(t *testing.T, prog []unix.SockFilter, rules []OCIRule, nr uint32, args [6]uint64) (filter, oci uint32) {
	t.Helper()
	filter, _, err := runBPF(prog, seccompData(nr, auditArch, args))
	if err != nil {
		t.Fatal(err)
	}
	return filter, ociDecide(t, rules, nr, args)
}

// kernelRefuses reports whether the kernel refuses the call itself
// (EINVAL) where the rules leave it to: a socket type with bits other
// than the type's four and SOCK_NONBLOCK and SOCK_CLOEXEC.
func kernelRefuses(nr uint32, args [6]uint64) bool {
	if nr != unix.SYS_SOCKET && nr != unix.SYS_SOCKETPAIR {
		return false
	}
	return uint32(args[1])&^uint32(sockType|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC) != 0
}

// rules2blocks are the filter's blocks for pol.
func rules2blocks(pol Policy) ([]block, error) { return rules(pol) }

// TestOCIRulesRefuseProbes checks the calls the gvisor backend's probes
// make: ptrace of a child, unshare, clone with namespace flags, and raw,
// packet and ICMP datagram sockets.
func TestOCIRulesRefuseProbes(t *testing.T) {
	rules := OCIRules(Policy{})
	for _, c := range []struct {
		name string
		nr   uint32
		args [6]uint64
		want unix.Errno
	}{
		{"ptrace attach", unix.SYS_PTRACE, [6]uint64{unix.PTRACE_ATTACH, 42}, unix.EPERM},
		{"unshare user", unix.SYS_UNSHARE, [6]uint64{unix.CLONE_NEWUSER}, unix.EPERM},
		{"clone newns", sysClone, [6]uint64{unix.CLONE_NEWNS | 17}, unix.EPERM},
		{"icmp datagram", unix.SYS_SOCKET, [6]uint64{unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP}, unix.EPERM},
		{"raw", unix.SYS_SOCKET, [6]uint64{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_RAW}, unix.EPERM},
		{"packet", unix.SYS_SOCKET, [6]uint64{unix.AF_PACKET, unix.SOCK_RAW}, unix.EAFNOSUPPORT},
		{"tcp", unix.SYS_SOCKET, [6]uint64{unix.AF_INET, unix.SOCK_STREAM | unix.SOCK_CLOEXEC}, 0},
		{"udp", unix.SYS_SOCKET, [6]uint64{unix.AF_INET6, unix.SOCK_DGRAM, unix.IPPROTO_UDP}, 0},
	} {
		want := uint32(retAllow)
		if c.want != 0 {
			want = unix.SECCOMP_RET_ERRNO | uint32(c.want)
		}
		if got := ociDecide(t, rules, c.nr, c.args); got != want {
			t.Errorf("%s: %#x, want %#x", c.name, got, want)
		}
	}
}
