//go:build linux && (amd64 || arm64)

package initproc

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"
)

// The program the init process runs is one byte string: a header, the
// operations, the relocations and the data (strings, structs, filters):
//
//	header       magic, version, counts and offsets (header)
//	ops          [nops]Op, in the order they run
//	relocs       [nrelocs]uint32: data offsets of pointer slots
//	data         bytes the operations point into
//
// Both ends are the same binary, so the operations travel in the memory
// layout of Op. The init process checks the whole program (verify) before
// it runs any of it: every jump goes forward and lands inside, every
// register and data reference is in range; a bad program is refused, never
// run in part.

// Program header constants.
const (
	progMagic   = 0x50495353 // "SSIP"
	progVersion = 1
)

// header starts a program.
type header struct {
	magic, version uint32
	size           uint32 // of the whole program, header included
	nops           uint32
	nrelocs        uint32
	dataOff        uint32 // from the start of the program
	dataLen        uint32
	flags          uint32
}

// NumRegs is the number of registers. Register 0 is "none": writes to it
// are dropped and it reads as 0.
const NumRegs = 64

// MaxProgram bounds a program's size, header included.
const MaxProgram = 8 << 20

// Op is one operation. Its arguments are constants, addresses in the
// program's data, or registers, as ArgKinds says (two bits each).
type Op struct {
	Kind     uint8
	Dst      uint8  // register the result goes to; 0 for none
	ArgKinds uint16 // argKind of argument i in bits 2i and 2i+1
	Nr       uint32 // system call number, or the kind's variant
	Layers   uint32 // the layers this operation builds (bits)
	Flags    uint32
	OkErrno  uint32 // an errno taken as success (the result is then 0)
	SkipErr  uint32 // an errno that jumps to Skip without a failure
	Skip     uint32 // jump target: an operation index after this one
	Unless   uint32 // UnavailUnless applies only when not all these layers applied
	Unavail  uint64 // errnos (bit e) that mean the kernel does not offer the layers
	// UnavailUnless are errnos that mean the same only when the layers
	// of Unless are not all applied (Landlock and seccomp refuse to load
	// without no_new_privs).
	UnavailUnless uint64
	Changed       uint64 // errnos (bit e) that mean a path was swapped since the checks
	Args          [6]uint64
}

// Operation kinds.
const (
	opSys          = iota + 1 // system call Nr: Dst = result
	opLoad                    // Dst = the Nr-byte value at data Args[0]
	opStore                   // the Nr-byte value at data Args[0] = Args[1]
	opALU                     // Dst = Args[0] <Nr> Args[1]
	opSkipIf                  // jump to Skip when cond Nr holds for Args[0], Args[1]
	opAssert                  // fail unless cond Nr holds for Args[0], Args[1]
	opFail                    // fail with errno Args[0]
	opBegin                   // start of the block of Layers; Skip is its end
	opEnd                     // end of a block: its layers are applied
	opSkipLayers              // jump to Skip when the layers Args[0] are (Nr 1: are not) all applied
	opFdPath                  // write "/proc/self/fd/<Args[0]>" to data Args[1]
	opLandlockRule            // a Landlock rule on a path (see childLandlockRule)
	opReport                  // send the layer report (see childReport)
	opExec                    // execute the script (see childExec)
	opReaper                  // start the script and reap (see childReaper)
	opRemount                 // remount Args[0] adding the flags Args[1] (see remount)
	opAwaitRun                // end of a pooled prefix: the run's descriptors, then its program (see runProgram)
	opKinds                   // (the number of kinds, plus one)
)

// Argument kinds.
const (
	argImm  = 0 // the value itself
	argData = 1 // the address of the data at this offset
	argReg  = 2 // the register's value
)

// Flags of an operation.
const (
	flagIgnoreErr   = 1 << iota // a failure is ignored
	flagErrToReg                // a failure stores its errno in Dst and jumps to Skip
	flagUnavailAny              // any errno means the kernel does not offer the layers
	flagAssertSwap              // opAssert: a mismatch is a swap since the checks
	flagOptional                // opLandlockRule: a missing path is skipped
	flagResolveRoot             // opLandlockRule: the path is resolved in Args[0] as root
	flagRetryAgain              // opSys: a failure with EAGAIN is tried again (a few times)
)

// Conditions of opSkipIf and opAssert.
const (
	condEq      = iota + 1 // a == b
	condNe                 // a != b
	condMaskSet            // a&b != 0
	condMaskClr            // a&b == 0
)

// ALU operations.
const (
	aluOr = iota + 1
	aluAnd
	aluAndNot
	aluAdd
)

// Wait modes of opReport: when the init process waits for the
// supervisor's go-ahead before the script starts.
const (
	WaitNever     = 0 // the supervisor cannot refuse the run any more
	WaitAlways    = 1 // the supervisor decides on the report in any case
	WaitIfMissing = 2 // only when a layer is missing (the report says so)
)

// Failure kinds, in a Report.
const (
	FailMissing    = 1 // the kernel does not offer the layers: the run may go on without them
	FailIncomplete = 2 // the layers were built part-way: the run is refused
	FailChanged    = 3 // a path was swapped since the supervisor's checks: refused
	FailFatal      = 4 // a step outside any layer failed: refused
)

// errnoBit is the bit of errno e in an errno set; errnos from 64 on have
// none, and no set holds them.
func errnoBit(e uint32) uint64 {
	if e >= 64 {
		return 0
	}
	return 1 << e
}

// Register names a register (see NumRegs).
type Register uint8

// Data is the offset of bytes in a program's data.
type Data uint32

// Arg is an operation's argument.
type Arg struct {
	kind uint8
	v    uint64
}

// Imm is the constant v.
func Imm(v uint64) Arg { return Arg{argImm, v} }

// Int is the constant v, negative values included (AT_FDCWD).
func Int(v int) Arg { return Arg{argImm, uint64(int64(v))} }

// Ref is the address of d in the init process.
func Ref(d Data) Arg { return Arg{argData, uint64(d)} }

// Reg is the value of register r.
func Reg(r Register) Arg { return Arg{argReg, uint64(r)} }

// Label marks a forward jump target (see Builder.Mark).
type Label int

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

// Sys adds the system call nr with args; desc names it in failure
// messages ("bind /usr", "pivot_root").
func (b *Builder) Sys(desc string, nr uintptr, args []Arg, opts ...Opt) int {
	return b.add(Op{Kind: opSys, Nr: uint32(nr)}, desc, args, opts)
}

// Load loads the width-byte value (1, 2, 4 or 8) at d into r.
func (b *Builder) Load(r Register, d Data, width int) {
	b.add(Op{Kind: opLoad, Nr: uint32(width), Dst: uint8(r)}, "load", []Arg{Ref(d)}, nil)
}

// Store stores v in the width-byte value at d.
func (b *Builder) Store(d Data, width int, v Arg) {
	b.add(Op{Kind: opStore, Nr: uint32(width)}, "store", []Arg{Ref(d), v}, nil)
}

// Or sets r to x | y.
func (b *Builder) Or(r Register, x, y Arg) {
	b.add(Op{Kind: opALU, Nr: aluOr, Dst: uint8(r)}, "or", []Arg{x, y}, nil)
}

// And sets r to x & y.
func (b *Builder) And(r Register, x, y Arg) {
	b.add(Op{Kind: opALU, Nr: aluAnd, Dst: uint8(r)}, "and", []Arg{x, y}, nil)
}

// Cond is a condition on two arguments.
type Cond uint32

// The conditions.
const (
	Eq      Cond = condEq      // x == y
	Ne      Cond = condNe      // x != y
	MaskSet Cond = condMaskSet // x&y != 0
	MaskClr Cond = condMaskClr // x&y == 0
)

// SkipIf jumps to l when c holds for x and y.
func (b *Builder) SkipIf(c Cond, x, y Arg, l Label) {
	i := b.add(Op{Kind: opSkipIf, Nr: uint32(c)}, "skip", []Arg{x, y}, nil)
	b.jumpTo(i, l)
}

// Jump jumps to l.
func (b *Builder) Jump(l Label) { b.SkipIf(Eq, Imm(0), Imm(0), l) }

// Assert fails, with desc, unless c holds for x and y: a failure that
// leaves the block's layers built part-way, or with swapped set, a swap
// since the supervisor's checks.
func (b *Builder) Assert(desc string, c Cond, x, y Arg, swapped bool) int {
	op := Op{Kind: opAssert, Nr: uint32(c)}
	if swapped {
		op.Flags |= flagAssertSwap
	}
	return b.add(op, desc, []Arg{x, y}, nil)
}

// Fail fails with desc and errno (0 for none), as a failure with that
// errno would (see Unavailable).
func (b *Builder) Fail(desc string, errno syscall.Errno, opts ...Opt) int {
	return b.add(Op{Kind: opFail}, desc, []Arg{Imm(uint64(errno))}, opts)
}

// Begin opens the block of the layers (bits): a failure inside it is
// theirs; End closes it, and the layers are then applied.
func (b *Builder) Begin(layers uint32) {
	if b.block >= 0 {
		b.fail(errors.New("nested layer blocks"))
		return
	}
	b.block = b.add(Op{Kind: opBegin, Layers: layers}, "begin", nil, nil)
	b.ops[b.block].Layers = layers
}

// End closes the open block.
func (b *Builder) End() {
	if b.block < 0 {
		b.fail(errors.New("End without Begin"))
		return
	}
	begin := b.block
	b.add(Op{Kind: opEnd}, "end", nil, nil)
	b.ops[begin].Skip = uint32(len(b.ops) - 1) // the opEnd
	b.block = -1
}

// SkipUnlessApplied jumps to l unless every layer of layers is applied.
func (b *Builder) SkipUnlessApplied(layers uint32, l Label) {
	i := b.add(Op{Kind: opSkipLayers, Nr: 1}, "skip", []Arg{Imm(uint64(layers))}, nil)
	b.jumpTo(i, l)
}

// SkipIfApplied jumps to l when every layer of layers is applied.
func (b *Builder) SkipIfApplied(layers uint32, l Label) {
	i := b.add(Op{Kind: opSkipLayers, Nr: 0}, "skip", []Arg{Imm(uint64(layers))}, nil)
	b.jumpTo(i, l)
}

// FdPath writes "/proc/self/fd/N", N the value of fd, to buf (32 bytes,
// from Zero): the path of the file open on fd, for mount(2).
func (b *Builder) FdPath(fd Arg, buf Data) {
	b.add(Op{Kind: opFdPath}, "fd path", []Arg{fd, Ref(buf)}, nil)
}

// LandlockRule adds a Landlock path-beneath rule to the ruleset open on
// ruleset: the path is opened (O_PATH, following symlinks; in root's
// tree with inRoot, see openat2's RESOLVE_IN_ROOT), and the rule allows
// dirAccess on a folder, fileAccess on anything else. A missing path is
// skipped when optional, else a failure; desc names the rule.
func (b *Builder) LandlockRule(desc string, root Arg, inRoot bool, path Data, ruleset Arg, dirAccess, fileAccess uint64, optional bool) int {
	op := Op{Kind: opLandlockRule}
	if optional {
		op.Flags |= flagOptional
	}
	if inRoot {
		op.Flags |= flagResolveRoot
	}
	return b.add(op, desc, []Arg{root, Ref(path), ruleset, Imm(dirAccess), Imm(fileAccess)}, nil)
}

// Remount remounts the mount at path with the mount flags set added to
// those the mount has (bind remount): inside a user namespace the flags a
// mount inherited from the host are locked and must be carried over. It
// serves where mount_setattr(2) is missing (before Linux 5.12).
func (b *Builder) Remount(desc string, path Data, set uintptr, opts ...Opt) int {
	return b.add(Op{Kind: opRemount}, desc, []Arg{Ref(path), Imm(uint64(set))}, opts)
}

// Report sends the layer report on fd and, as wait says, waits for the
// supervisor's go-ahead on config; a report that refuses the run ends the
// init process.
func (b *Builder) Report(fd, config int, wait uint32) {
	b.add(Op{Kind: opReport, Nr: wait}, "report", []Arg{Int(fd), Int(config)}, nil)
}

// AwaitRun ends a pooled init process's prefix, the program it runs while
// it waits in a pool (see run's Pool): it sends Ready on its report
// descriptor, receives the run's descriptors on the config socket (see
// childReceive), then the run's program, which it runs with the registers
// and the layers as the prefix left them.
func (b *Builder) AwaitRun() {
	b.add(Op{Kind: opAwaitRun}, "await the run", nil, nil)
}

// Launch is how the script is started: the argument and environment
// vectors, the working folder and the limits set on the script alone.
type Launch struct {
	Argv, Env []string
	Dir       string
	// AddressSpace and CPUSeconds are RLIMIT_AS and RLIMIT_CPU (soft and
	// hard), set on the script alone right before execve; 0 leaves them.
	AddressSpace, CPUSeconds uint64
	// Procs is RLIMIT_NPROC for the reaper and the script, with the
	// reaper counted (opReaper only); 0 leaves it.
	Procs uint64
	// ReportFD is where an exec failure is reported.
	ReportFD int
}

// launchData is the struct opExec and opReaper find at their Args[0].
type launchData struct {
	argv0, argv, env   uint64 // pointers (relocated): argv[0], argv and envp
	dir                uint64
	as, cpu, nproc     uint64 // limits (see Launch)
	reportFD           int64
	statusFD, configFD int64 // opReaper only
}

// launchData adds l's vectors and limits to the data.
func (b *Builder) launchData(l Launch, statusFD, configFD int) Data {
	if len(l.Argv) == 0 {
		b.fail(errors.New("no command"))
		return 0
	}
	var argv, env []Data
	for _, a := range l.Argv {
		argv = append(argv, b.String(a))
	}
	for _, e := range l.Env {
		env = append(env, b.String(e))
	}
	dir := b.String(l.Dir)
	av, ev := b.Pointers(argv), b.Pointers(env)
	ld := launchData{as: l.AddressSpace, cpu: l.CPUSeconds, nproc: l.Procs,
		reportFD: int64(l.ReportFD), statusFD: int64(statusFD), configFD: int64(configFD)}
	d := Struct(b, &ld)
	b.SetPointer(d+Data(unsafe.Offsetof(ld.argv0)), argv[0])
	b.SetPointer(d+Data(unsafe.Offsetof(ld.argv)), av)
	b.SetPointer(d+Data(unsafe.Offsetof(ld.env)), ev)
	b.SetPointer(d+Data(unsafe.Offsetof(ld.dir)), dir)
	return d
}

// Exec executes the script in place of the init process (no PID
// namespace: no reaper). It does not return when execve succeeds; a
// failure is reported on l.ReportFD and ends the init process.
func (b *Builder) Exec(l Launch) {
	b.add(Op{Kind: opExec}, "exec", []Arg{Ref(b.launchData(l, -1, -1))}, nil)
}

// Reaper starts the script as a child and stays as the run's PID 1 (see
// childReaper): it reaps until the script has exited, kills what is left
// of the run when the script exits or when the supervisor closes config,
// and sends the script's status and the run's usage on status. oomScore
// is the descriptor of its own oom_score_adj (-1 for none).
func (b *Builder) Reaper(l Launch, status, config int, oomScore Arg) {
	b.add(Op{Kind: opReaper}, "reaper", []Arg{Ref(b.launchData(l, status, config)), oomScore}, nil)
}

// Program is a finished program and what the supervisor keeps of it: the
// description of each operation, for failure messages.
type Program struct {
	Bytes []byte
	descs []string
}

// Len is the number of operations.
func (p *Program) Len() int { return len(p.descs) }

// Describe names operation i ("" when out of range).
func (p *Program) Describe(i uint32) string {
	if p == nil || int(i) >= len(p.descs) {
		return ""
	}
	return p.descs[i]
}

// Finish encodes the program.
func (b *Builder) Finish() (*Program, error) {
	if b.block >= 0 {
		b.fail(errors.New("a layer block is not closed"))
	}
	for l, at := range b.labels {
		if at < 0 && len(b.uses[l]) > 0 {
			b.fail(fmt.Errorf("label %d used but not marked", l))
		}
	}
	if b.err != nil {
		return nil, fmt.Errorf("init program: %w", b.err)
	}
	b.align(8)
	hsize := int(unsafe.Sizeof(header{}))
	opsize := int(unsafe.Sizeof(Op{}))
	relocOff := hsize + len(b.ops)*opsize
	dataOff := relocOff + 4*len(b.relocs)
	dataOff = (dataOff + 7) &^ 7
	size := dataOff + len(b.data)
	if size > MaxProgram {
		return nil, fmt.Errorf("init program: %d bytes, more than %d", size, MaxProgram)
	}
	out := make([]byte, size)
	h := (*header)(unsafe.Pointer(&out[0]))
	*h = header{magic: progMagic, version: progVersion, size: uint32(size), nops: uint32(len(b.ops)),
		nrelocs: uint32(len(b.relocs)), dataOff: uint32(dataOff), dataLen: uint32(len(b.data))}
	if len(b.ops) > 0 {
		copy(out[hsize:], unsafe.Slice((*byte)(unsafe.Pointer(&b.ops[0])), len(b.ops)*opsize))
	}
	for i, r := range b.relocs {
		*(*uint32)(unsafe.Pointer(&out[relocOff+4*i])) = r
	}
	copy(out[dataOff:], b.data)
	return &Program{Bytes: out, descs: b.descs}, nil
}
