//go:build linux && (amd64 || arm64)

package seccomp

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"testing"

	"golang.org/x/sys/unix"
)

// runBPF interprets the classic BPF of the filter on data (a struct
// seccomp_data) and returns what it returns and how many instructions it
// executed.
func runBPF(prog []unix.SockFilter, data []byte) (uint32, int, error) {
	var acc uint32
	steps := 0
	for pc := 0; pc < len(prog); pc++ {
		steps++
		f := prog[pc]
		switch f.Code {
		case BpfLoadWord:
			if int(f.K)+4 > len(data) {
				return 0, steps, fmt.Errorf("load at %d out of seccomp_data", f.K)
			}
			acc = binary.LittleEndian.Uint32(data[f.K:])
		case bpfAndK:
			acc &= f.K
		case BpfJumpEq, bpfJumpGE, bpfJumpSet:
			taken := acc == f.K
			if f.Code == bpfJumpGE {
				taken = acc >= f.K
			} else if f.Code == bpfJumpSet {
				taken = acc&f.K != 0
			}
			if taken {
				pc += int(f.Jt)
			} else {
				pc += int(f.Jf)
			}
		case bpfJumpAlways:
			pc += int(f.K)
		case BpfReturn:
			return f.K, steps, nil
		default:
			return 0, steps, fmt.Errorf("instruction %d: unknown code %#x", pc, f.Code)
		}
	}
	return 0, steps, fmt.Errorf("ran off the end of the program")
}

// seccompData builds a struct seccomp_data.
func seccompData(nr, arch uint32, args [6]uint64) []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[0:], nr)
	binary.LittleEndian.PutUint32(b[4:], arch)
	for i, a := range args {
		binary.LittleEndian.PutUint64(b[16+8*i:], a)
	}
	return b
}

// reference is what the filter must return: the architecture checks, then
// the first block of the call's number, else allow.
func reference(bs []block, data []byte) (uint32, error) {
	if binary.LittleEndian.Uint32(data[4:]) != auditArch {
		return retKill, nil
	}
	nr := binary.LittleEndian.Uint32(data[0:])
	if checkX32 && nr >= x32SyscallBit {
		return retKill, nil
	}
	for _, b := range bs {
		if b.nr == nr {
			ret, _, err := runBPF(b.body, data)
			return ret, err
		}
	}
	return retAllow, nil
}

// allPolicies returns every combination of Policy's fields.
func allPolicies() []Policy {
	var out []Policy
	for bits := 0; bits < 1<<8; bits++ {
		out = append(out, Policy{
			HostNet: bits&1 != 0, SharedNet: bits&2 != 0, NoMount: bits&4 != 0,
			NoIPC: bits&8 != 0, NoPID: bits&16 != 0, NoMemCgroup: bits&32 != 0,
			NoQuotas: bits&64 != 0, NotifyEpollAdd: bits&128 != 0,
		})
	}
	return out
}

// TestFilterDecidesAsItsBlocks checks the binary search of dispatch: for
// every policy, every system call number (and x32's, and another
// architecture) and argument values made of the constants the blocks test,
// the assembled filter returns what testing the blocks one after the other
// returns.
func TestFilterDecidesAsItsBlocks(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, pol := range allPolicies() {
		prog, err := Filter(pol)
		if err != nil {
			t.Fatalf("%+v: %v", pol, err)
		}
		bs, err := rules(pol)
		if err != nil {
			t.Fatal(err)
		}
		// Argument words worth trying: the blocks' constants, their
		// neighbours, and a few others.
		words := []uint32{0, 1, 0xffffffff, 0x80000000}
		for _, b := range bs {
			for _, f := range b.body {
				words = append(words, f.K, f.K+1, f.K-1, f.K|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
			}
		}
		word := func() uint64 {
			lo := uint64(words[rng.Intn(len(words))])
			if rng.Intn(8) == 0 {
				return lo | uint64(words[rng.Intn(len(words))])<<32
			}
			return lo
		}
		check := func(nr, arch uint32, args [6]uint64) {
			data := seccompData(nr, arch, args)
			got, _, err := runBPF(prog, data)
			if err != nil {
				t.Fatalf("%+v: nr %d: %v", pol, nr, err)
			}
			want, err := reference(bs, data)
			if err != nil {
				t.Fatalf("%+v: nr %d: reference: %v", pol, nr, err)
			}
			if got != want {
				t.Fatalf("%+v: nr %d args %x: filter returns %#x, its blocks %#x", pol, nr, args, got, want)
			}
		}
		for nr := uint32(0); nr < 1100; nr++ {
			check(nr, auditArch, [6]uint64{})
			check(nr|x32SyscallBit, auditArch, [6]uint64{})
			check(nr, auditArch+1, [6]uint64{})
		}
		for _, b := range bs {
			for i := 0; i < 200; i++ {
				var args [6]uint64
				for j := range args {
					args[j] = word()
				}
				check(b.nr, auditArch, args)
			}
		}
	}
}

// TestEpollAddNotifies: with NotifyEpollAdd only epoll_ctl's
// EPOLL_CTL_ADD goes to the supervisor (whatever the operation's high
// word: the kernel reads an int); MOD and DEL, the waits and every
// operation without the policy pass.
func TestEpollAddNotifies(t *testing.T) {
	for _, c := range []struct {
		notify bool
		nr     uint32
		op     uint64
		want   uint32
	}{
		{true, unix.SYS_EPOLL_CTL, unix.EPOLL_CTL_ADD, unix.SECCOMP_RET_USER_NOTIF},
		{true, unix.SYS_EPOLL_CTL, 0xffffffff00000000 | unix.EPOLL_CTL_ADD, unix.SECCOMP_RET_USER_NOTIF},
		{true, unix.SYS_EPOLL_CTL, unix.EPOLL_CTL_MOD, retAllow},
		{true, unix.SYS_EPOLL_CTL, unix.EPOLL_CTL_DEL, retAllow},
		{true, unix.SYS_EPOLL_CTL, 0, retAllow},
		{true, unix.SYS_EPOLL_PWAIT, unix.EPOLL_CTL_ADD, retAllow},
		{false, unix.SYS_EPOLL_CTL, unix.EPOLL_CTL_ADD, retAllow},
	} {
		prog, err := Filter(Policy{NotifyEpollAdd: c.notify})
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := runBPF(prog, seccompData(c.nr, auditArch, [6]uint64{3, c.op, 4, 0}))
		if err != nil || got != c.want {
			t.Errorf("notify %v, nr %d op %#x: %#x, %v; want %#x", c.notify, c.nr, c.op, got, err, c.want)
		}
	}
}

// TestFilterIsShortForAllowedCalls checks what dispatch is for: a call
// without a block passes few instructions (testing every block in turn
// took over 200), so the kernel's check of which calls the filter always
// allows stays cheap.
func TestFilterIsShortForAllowedCalls(t *testing.T) {
	prog, err := Filter(Policy{})
	if err != nil {
		t.Fatal(err)
	}
	for _, nr := range []uint32{unix.SYS_READ, unix.SYS_WRITE, unix.SYS_OPENAT, unix.SYS_MMAP, unix.SYS_EXIT_GROUP} {
		ret, steps, err := runBPF(prog, seccompData(nr, auditArch, [6]uint64{}))
		if err != nil || ret != retAllow {
			t.Fatalf("nr %d: %#x, %v", nr, ret, err)
		}
		if steps > 24 {
			t.Errorf("nr %d passes %d instructions", nr, steps)
		}
	}
}

// TestSearchTreeAllocatesOnce checks that the search is assembled in one
// slice of the right size: the filter is built on every start, and a
// slice per subtree, copied at every level, cost a CLI call some 30 page
// faults.
func TestSearchTreeAllocatesOnce(t *testing.T) {
	bs, err := rules(Policy{})
	if err != nil {
		t.Fatal(err)
	}
	sorted := byNumber(bs)
	tree, err := searchTree(sorted)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree) != cap(tree) || len(tree) != treeLen(sorted) {
		t.Errorf("search of %d instructions in a slice of %d, treeLen %d", len(tree), cap(tree), treeLen(sorted))
	}
	if n := testing.AllocsPerRun(10, func() { searchTree(sorted) }); n != 1 {
		t.Errorf("searchTree allocates %v times, want 1", n)
	}
}
