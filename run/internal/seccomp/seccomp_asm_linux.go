//go:build linux && (amd64 || arm64)

package seccomp

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// bpfAsm assembles classic BPF blocks (see block) with named forward jump
// targets, so that blocks with several argument checks need no
// hand-counted offsets. Labels are local to the current ifSyscall block;
// each block defines "allow" (return SECCOMP_RET_ALLOW). Every path of a
// block's body must return.
type bpfAsm struct {
	insns  []bpfInsn      // the current block's
	labels map[string]int // scoped name → instruction index in the block
	scope  int
	blocks []block
	err    error
}

// bpfInsn is an instruction whose jump targets may still be labels.
type bpfInsn struct {
	f      unix.SockFilter
	jt, jf string // scoped label names; "" is the next instruction
}

// scoped is name within the current scope. Concatenated rather than
// formatted: it runs for every jump of the filter, about 50 per compile.
func (a *bpfAsm) scoped(name string) string { return strconv.Itoa(a.scope) + ":" + name }

func (a *bpfAsm) emit(f unix.SockFilter, jt, jf string) {
	a.insns = append(a.insns, bpfInsn{f: f, jt: jt, jf: jf})
}

// label marks the next instruction.
func (a *bpfAsm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[a.scoped(name)] = len(a.insns)
}

// load loads the 32-bit word at off of struct seccomp_data.
func (a *bpfAsm) load(off uint32) { a.emit(Stmt(BpfLoadWord, off), "", "") }

// and masks the accumulator.
func (a *bpfAsm) and(k uint32) { a.emit(Stmt(bpfAndK, k), "", "") }

// ret returns k.
func (a *bpfAsm) ret(k uint32) { a.emit(Stmt(BpfReturn, k), "", "") }

// jeq jumps to label when the accumulator equals k.
func (a *bpfAsm) jeq(k uint32, label string) { a.emit(Jump(BpfJumpEq, k, 0, 0), a.scoped(label), "") }

// jne jumps to label when the accumulator differs from k.
func (a *bpfAsm) jne(k uint32, label string) { a.emit(Jump(BpfJumpEq, k, 0, 0), "", a.scoped(label)) }

// denyFlag returns EPERM when the argument word at off has any bit of
// flag, and allows the call otherwise.
func (a *bpfAsm) denyFlag(off, flag uint32) {
	a.load(off)
	a.emit(Jump(bpfJumpSet, flag, 0, 0), "", a.scoped("allow"))
	a.ret(retEPERM)
}

// ifSyscall assembles body as the block of system call nr, in a scope of
// its own.
func (a *bpfAsm) ifSyscall(nr uint32, body func()) {
	a.scope++
	a.insns = nil
	body()
	a.label("allow")
	a.ret(retAllow)
	prog, err := a.resolve()
	if err != nil && a.err == nil {
		a.err = err
	}
	a.blocks = append(a.blocks, block{nr: nr, body: prog})
}

// program returns the blocks assembled, or the first error.
func (a *bpfAsm) program() ([]block, error) { return a.blocks, a.err }

// resolve resolves the labels of the current block.
func (a *bpfAsm) resolve() ([]unix.SockFilter, error) {
	out := make([]unix.SockFilter, len(a.insns))
	for i, in := range a.insns {
		f := in.f
		for _, t := range []struct {
			name string
			off  *uint8
		}{{in.jt, &f.Jt}, {in.jf, &f.Jf}} {
			if t.name == "" {
				continue
			}
			target, ok := a.labels[t.name]
			if !ok {
				return nil, fmt.Errorf("seccomp: undefined label %s", t.name)
			}
			d := target - i - 1
			if d < 0 || d > 255 {
				return nil, fmt.Errorf("seccomp: jump to %s out of range (%d)", t.name, d)
			}
			*t.off = uint8(d)
		}
		out[i] = f
	}
	return out, nil
}
