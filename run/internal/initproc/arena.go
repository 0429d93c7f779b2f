//go:build linux && (amd64 || arm64)

package initproc

import "golang.org/x/sys/unix"

// Sizes of the arena's parts.
const (
	stackSize   = 128 << 10 // the init process's stack
	maxFiles    = 512       // descriptors Start places (Attr.Files)
	maxKeep     = 16        // mappings kept by the full unmapping
	scratchSize = 4096      // buffers of the compound operations
	maxFails    = 16        // failures a report holds
)

// arena is the init process's memory: one private anonymous mapping that
// Start fills before clone(2), which the child runs on and keeps when it
// unmaps the rest of the supervisor's memory. Nothing in it is a Go
// pointer: the child stores no pointer (a store outside the stack would
// need the Go runtime's write barrier).
type arena struct {
	// g is what the compiler's stack checks read through the g register
	// (stack bounds, then stackguard0): the bounds of stack below.
	g   [4]uintptr
	pre preamble
	vm  vmState
	// rseq is a struct rseq (32-byte aligned inside) the child registers
	// to learn that no other is (see childUnmap).
	rseq    [64]byte
	scratch [scratchSize]byte
	stack   [stackSize]byte
	prog    [MaxProgram]byte
}

// preamble is what Start tells the child before any program.
type preamble struct {
	files  [maxFiles]int32 // the supervisor's descriptors to place at 0, 1, 2...
	nfiles int32
	// report is the descriptor (after placement) that failures before
	// the first opReport are reported on.
	report int32
	// keep lists the mappings the child keeps (sorted, page aligned) when
	// it unmaps everything else: the executable's read-only segments and
	// the arena.
	keep  [maxKeep][2]uintptr
	nkeep int32
	// full asks for the full unmapping (see childUnmap); stack is the
	// process's initial stack (its argv and environment strings), which
	// the child always unmaps.
	full  int32
	stack [2]uintptr
	name  [16]byte // the child's comm
	// unshare are the namespaces the child creates itself (Attr.Unshare).
	unshare uintptr
}

// vmState is the program's state in the child.
type vmState struct {
	regs    [NumRegs]uint64
	applied uint32 // layers whose block ended without a failure
	missing uint32 // layers not offered here (FailMissing)
	// block and blockEnd describe the open block (opBegin): its layers
	// and the index of its opEnd; inBlock is 0 outside one.
	block, blockEnd, inBlock uint32
	report                   Report
}

// Report is the init process's layer report: the first message on the
// report descriptor, in the memory layout of this struct.
type Report struct {
	Magic   uint32
	Applied uint32 // layers applied (bits of the program's layers)
	Missing uint32 // layers the kernel does not offer here
	// Stopped is 1 when the init process refused the run (a failure other
	// than FailMissing) and exits; Waiting is 1 when it waits for the
	// supervisor's go-ahead.
	Stopped, Waiting uint32
	NFail            uint32
	Fails            [maxFails]Failure
}

// Failure is one failed operation of a Report.
type Failure struct {
	Layers uint32 // the layers it was building (0: none)
	Kind   uint32 // FailMissing, FailIncomplete, FailChanged or FailFatal
	Op     uint32 // its index in the program
	Errno  uint32 // 0 when none (an assertion)
}

// Valid reports whether r is a report (its magic number, its failures
// counted within its array).
func (r *Report) Valid() bool { return r.Magic == reportMagic && r.NFail <= maxFails }

// ExecError is the message after a Report when the script could not be
// started: the step that failed and its errno.
type ExecError struct {
	Magic uint32
	Step  uint32
	Errno uint32
	_     uint32
}

// Valid reports whether e is an exec error report.
func (e *ExecError) Valid() bool { return e.Magic == execErrorMagic }

// Ready is the message on the report descriptor (Attr.ReportFD) of an
// init process whose prefix is done and that awaits its run (see
// Builder.AwaitRun). A prefix that fails sends its Report instead; both
// start with their magic number.
type Ready struct {
	Magic uint32
	_     uint32
}

// ReadyMagic is Ready's magic number, which Report's is not.
const ReadyMagic = readyMagic

// Magic numbers of the messages on the report descriptor.
const (
	reportMagic    = 0x54504552 // "REPT"
	execErrorMagic = 0x52524558 // "EXRR"
	readyMagic     = 0x59444552 // "REDY"
)

// Steps of an ExecError.
const (
	StepChdir      = 1 // chdir to the working folder
	StepLimitAS    = 2 // RLIMIT_AS on the script
	StepLimitCPU   = 3
	StepLimitProcs = 4 // RLIMIT_NPROC on the init process, which reaps
	StepExecve     = 5
	StepReaper     = 6 // the reaping's own set-up (signalfd, fork)
)

// rseqSignature is the signature the child registers its rseq area with.
const rseqSignature = 0x53530001

// Descriptor numbers the init process's code relies on.
const closeRangeAll = ^uint(0)

// sysFstat is fstat(2) (newfstatat on some architectures is all there is
// of stat; both have fstat).
const sysFstat = unix.SYS_FSTAT
