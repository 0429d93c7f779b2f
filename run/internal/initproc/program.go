//go:build linux && (amd64 || arm64)

package initproc

import (
	"errors"
	"fmt"
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
