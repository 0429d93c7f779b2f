//go:build linux && (amd64 || arm64)

package initproc

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"
)

// Builder assembles a program in the supervisor.
type Builder struct {
	ops    []Op
	descs  []string
	data   []byte
	relocs []uint32
	nextR  Register
	labels []int   // operation index of each label, -1 until marked
	uses   [][]use // jumps waiting for each label
	block  int     // index of the open opBegin, or -1
	err    error
}

// use is a jump field waiting for a label.
type use struct {
	op   int
	skip bool // Op.Skip (the only jump field)
}

// NewBuilder returns an empty program whose registers from first on are
// free (those below are the caller's, kept across programs).
func NewBuilder(first Register) *Builder {
	if first == 0 {
		first = 1
	}
	// Room for a run's program without growing (some 400 operations
	// and 7 KiB of data by default): the builder's memory is fresh pages
	// in a new process, each a page fault.
	return &Builder{nextR: first, block: -1, ops: make([]Op, 0, 512), descs: make([]string, 0, 512), data: make([]byte, 0, 16<<10)}
}

// NewReg allocates a register.
func (b *Builder) NewReg() Register {
	if int(b.nextR) >= NumRegs {
		b.fail(errors.New("out of registers"))
		return 0
	}
	r := b.nextR
	b.nextR++
	return r
}

func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// align pads the data to a multiple of n.
func (b *Builder) align(n int) {
	for len(b.data)%n != 0 {
		b.data = append(b.data, 0)
	}
}

// String adds s, NUL-terminated, to the data.
func (b *Builder) String(s string) Data {
	d := Data(len(b.data))
	b.data = append(append(b.data, s...), 0)
	return d
}

// Bytes adds p, 8-byte aligned, to the data.
func (b *Builder) Bytes(p []byte) Data {
	b.align(8)
	d := Data(len(b.data))
	b.data = append(b.data, p...)
	return d
}

// Zero adds n zero bytes, 8-byte aligned, to the data.
func (b *Builder) Zero(n int) Data {
	b.align(8)
	d := Data(len(b.data))
	b.data = append(b.data, make([]byte, n)...)
	return d
}

// Struct adds the bytes of *v (a struct without pointers), 8-byte aligned.
func Struct[T any](b *Builder, v *T) Data {
	return b.Bytes(unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v)))
}

// Pointers adds an array of pointers to ds, then a NULL one (argv, envp).
func (b *Builder) Pointers(ds []Data) Data {
	arr := b.Zero(8 * (len(ds) + 1))
	for i, d := range ds {
		b.SetPointer(arr+Data(8*i), d)
	}
	return arr
}

// SetPointer makes the 8-byte slot at data offset slot (8-byte aligned)
// hold the address of d in the init process (a pointer inside a struct:
// sock_fprog's filter, an iovec).
func (b *Builder) SetPointer(slot, d Data) {
	if slot%8 != 0 || int(slot)+8 > len(b.data) {
		b.fail(fmt.Errorf("pointer slot %d outside the data", slot))
		return
	}
	// The init process adds the data's address (see relocate); 0 stays
	// NULL, so offsets are stored plus one.
	v := uint64(d) + 1
	for i := 0; i < 8; i++ {
		b.data[int(slot)+i] = byte(v >> (8 * i))
	}
	b.relocs = append(b.relocs, uint32(slot))
}

// NewLabel makes a label to mark later.
func (b *Builder) NewLabel() Label {
	b.labels = append(b.labels, -1)
	b.uses = append(b.uses, nil)
	return Label(len(b.labels) - 1)
}

// Mark makes l the next operation's index. Jumps only go forward: a label
// is used before it is marked.
func (b *Builder) Mark(l Label) {
	if b.labels[l] >= 0 {
		b.fail(fmt.Errorf("label %d marked twice", l))
		return
	}
	b.labels[l] = len(b.ops)
	for _, u := range b.uses[l] {
		b.ops[u.op].Skip = uint32(len(b.ops))
	}
	b.uses[l] = nil
}

// jumpTo makes op i's Skip field jump to l.
func (b *Builder) jumpTo(i int, l Label) {
	if b.labels[l] >= 0 {
		b.fail(fmt.Errorf("jump to label %d, marked before: jumps go forward", l))
		return
	}
	b.uses[l] = append(b.uses[l], use{op: i, skip: true})
}

// Opt sets details of an operation.
type Opt func(b *Builder, i int)

// Into stores the operation's result in r.
func Into(r Register) Opt { return func(b *Builder, i int) { b.ops[i].Dst = uint8(r) } }

// OkOn takes the errno e as success.
func OkOn(e syscall.Errno) Opt {
	return func(b *Builder, i int) { b.ops[i].OkErrno = uint32(e) }
}

// SkipOn jumps to l, without a failure, when the errno is e.
func SkipOn(e syscall.Errno, l Label) Opt {
	return func(b *Builder, i int) {
		b.ops[i].SkipErr = uint32(e)
		b.jumpTo(i, l)
	}
}

// Unavailable says that a failure with one of errnos means the kernel (or
// a policy over it) does not offer the layers: the run may go on without
// them. Any other errno leaves them built part-way, which refuses the run.
func Unavailable(errnos ...syscall.Errno) Opt {
	return func(b *Builder, i int) {
		for _, e := range errnos {
			b.ops[i].Unavail |= errnoBit(uint32(e))
		}
	}
}

// UnavailableAny says that any failure means the layers are not offered.
func UnavailableAny() Opt {
	return func(b *Builder, i int) { b.ops[i].Flags |= flagUnavailAny }
}

// UnavailableUnless is Unavailable for runs where the layers are not all
// applied (Landlock and seccomp refuse to load without no_new_privs).
func UnavailableUnless(layers uint32, errnos ...syscall.Errno) Opt {
	return func(b *Builder, i int) {
		b.ops[i].Unless = layers
		for _, e := range errnos {
			b.ops[i].UnavailUnless |= errnoBit(uint32(e))
		}
	}
}

// ChangedOn says that a failure with one of errnos means a path was
// swapped since the supervisor checked it (a symlink met on the way).
func ChangedOn(errnos ...syscall.Errno) Opt {
	return func(b *Builder, i int) {
		for _, e := range errnos {
			b.ops[i].Changed |= errnoBit(uint32(e))
		}
	}
}

// RetryAgain tries the call again when it fails with EAGAIN, as
// openat2(2) with RESOLVE_BENEATH or RESOLVE_IN_ROOT asks when a ".." met
// a concurrent rename or mount.
func RetryAgain() Opt { return func(b *Builder, i int) { b.ops[i].Flags |= flagRetryAgain } }

// IgnoreErrors ignores any failure.
func IgnoreErrors() Opt { return func(b *Builder, i int) { b.ops[i].Flags |= flagIgnoreErr } }

// ErrTo stores the errno of a failure in r and jumps to l, without a
// failure.
func ErrTo(r Register, l Label) Opt {
	return func(b *Builder, i int) {
		b.ops[i].Flags |= flagErrToReg
		b.ops[i].Dst = uint8(r)
		b.jumpTo(i, l)
	}
}

// add appends an operation with its description.
func (b *Builder) add(op Op, desc string, args []Arg, opts []Opt) int {
	if len(args) > 6 {
		b.fail(fmt.Errorf("%s: %d arguments", desc, len(args)))
		args = args[:6]
	}
	for i, a := range args {
		op.ArgKinds |= uint16(a.kind) << (2 * i)
		op.Args[i] = a.v
	}
	if b.block >= 0 {
		op.Layers = b.ops[b.block].Layers
	}
	b.ops = append(b.ops, op)
	b.descs = append(b.descs, desc)
	i := len(b.ops) - 1
	for _, o := range opts {
		o(b, i)
	}
	return i
}
