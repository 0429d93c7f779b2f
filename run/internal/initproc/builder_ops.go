//go:build linux && (amd64 || arm64)

package initproc

import (
	"errors"
	"syscall"
	"unsafe"
)

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
