//go:build linux && (amd64 || arm64)

package initproc

import (
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// childReadProgram reads one program from fd into a.prog and returns its
// size; ok is false on EOF or an error (the supervisor gave up).
//
//go:norace
//go:nocheckptr
func childReadProgram(a *arena, fd uintptr) (int, bool) {
	hsize := int(unsafe.Sizeof(header{}))
	got, want := 0, hsize
	for got < want {
		n, e := sys(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&a.prog[got])), uintptr(want-got), 0, 0, 0)
		if e == uint32(unix.EINTR) {
			continue
		}
		if e != 0 || n == 0 {
			return 0, false
		}
		got += int(n)
		if want == hsize && got >= hsize {
			h := (*header)(unsafe.Pointer(&a.prog[0]))
			if h.magic != progMagic || h.size < uint32(hsize) || h.size > MaxProgram {
				return 0, false
			}
			want = int(h.size)
		}
	}
	return got, true
}

// runProgram verifies and runs the program of n bytes in a.prog, and the
// run's program after a pooled prefix (opAwaitRun), and returns the init
// process's exit status (when no operation ended it).
//
//go:norace
//go:nocheckptr
func (a *arena) runProgram(n int) int {
	for {
		p := unsafe.Pointer(&a.prog[0])
		if verify(p, n) != 0 {
			a.vm.report.NFail = 0
			a.fatal(0, 0)
			return stageconfig.ExitFailure
		}
		h := (*header)(p)
		data := unsafe.Add(p, h.dataOff)
		relocate(p, data)
		code := a.run(unsafe.Add(p, unsafe.Sizeof(header{})), h.nops, data)
		if code != awaitRun {
			return code
		}
		ready := Ready{Magic: readyMagic}
		if a.pre.report >= 0 {
			if _, e := sys(unix.SYS_WRITE, uintptr(a.pre.report), uintptr(unsafe.Pointer(&ready)), unsafe.Sizeof(ready), 0, 0, 0); e != 0 {
				return stageconfig.ExitFailure
			}
		}
		var ok bool
		if !childReceive(a) {
			return stageconfig.ExitFailure
		}
		if n, ok = childReadProgram(a, stageconfig.ConfigFD); !ok {
			return stageconfig.ExitFailure
		}
	}
}

// awaitRun is run's result at opAwaitRun: the run's program comes next.
const awaitRun = -1

// arg is the value of argument i of op.
//
//go:norace
//go:nocheckptr
func (a *arena) arg(op *Op, i int, data unsafe.Pointer) uintptr {
	switch (op.ArgKinds >> (2 * i)) & 3 {
	case argData:
		return uintptr(unsafe.Add(data, op.Args[i]))
	case argReg:
		return uintptr(a.vm.regs[op.Args[i]&(NumRegs-1)])
	}
	return uintptr(op.Args[i])
}

// set stores v in register r (register 0 drops it).
//
//go:norace
//go:nocheckptr
func (a *arena) set(r uint8, v uint64) {
	if r != 0 && r < NumRegs {
		a.vm.regs[r] = v
	}
}

// run runs the nops operations at ops over data and returns the exit
// status when it reaches the end.
//
//go:norace
//go:nocheckptr
func (a *arena) run(ops unsafe.Pointer, nops uint32, data unsafe.Pointer) int {
	opsize := unsafe.Sizeof(Op{})
	for pc := uint32(0); pc < nops; {
		op := (*Op)(unsafe.Add(ops, uintptr(pc)*opsize))
		next, stop := pc+1, false
		switch op.Kind {
		case opSys:
			next, stop = a.sysOp(op, pc, data)
		case opLoad, opStore, opALU:
			a.compute(op, data)
		case opSkipIf:
			if holds(op.Nr, a.arg(op, 0, data), a.arg(op, 1, data)) {
				next = op.Skip
			}
		case opAssert:
			if !holds(op.Nr, a.arg(op, 0, data), a.arg(op, 1, data)) {
				kind := uint32(FailIncomplete)
				if op.Flags&flagAssertSwap != 0 {
					kind = FailChanged
				}
				stop = a.fail(op, pc, kind, 0)
			}
		case opFail:
			next, stop = a.failed(op, pc, uint32(op.Args[0]))
		case opBegin:
			a.vm.block, a.vm.blockEnd, a.vm.inBlock = op.Layers, op.Skip, 1
		case opEnd:
			a.vm.applied |= a.vm.block &^ a.vm.missing
			a.vm.inBlock = 0
		case opSkipLayers:
			mask := uint32(op.Args[0])
			all := a.vm.applied&mask == mask
			if all == (op.Nr == 0) {
				next = op.Skip
			}
		case opFdPath:
			fdPath(unsafe.Add(data, op.Args[1]), uint64(a.arg(op, 0, data)))
		case opLandlockRule:
			if e := a.landlockRule(op, data); e != 0 {
				next, stop = a.failed(op, pc, e)
			}
		case opRemount:
			if e := a.remount(op, data); e != 0 {
				next, stop = a.failed(op, pc, e)
			}
		case opAwaitRun:
			return awaitRun
		case opReport:
			a.report(op, data)
		case opExec:
			childExec((*launchData)(unsafe.Add(data, op.Args[0])))
			return 127
		case opReaper:
			return childReaper(a, (*launchData)(unsafe.Add(data, op.Args[0])), a.arg(op, 1, data))
		}
		if stop {
			return stageconfig.ExitFailure
		}
		pc = next
	}
	return 0
}

// sysOp is opSys at pc: the system call, tried again on EAGAIN when op
// says so; it returns the next operation, or stop when the run is refused
// (see failed).
//
//go:norace
//go:nocheckptr
func (a *arena) sysOp(op *Op, pc uint32, data unsafe.Pointer) (next uint32, stop bool) {
	r, e := sys(uintptr(op.Nr), a.arg(op, 0, data), a.arg(op, 1, data), a.arg(op, 2, data),
		a.arg(op, 3, data), a.arg(op, 4, data), a.arg(op, 5, data))
	for try := 0; e == uint32(unix.EAGAIN) && op.Flags&flagRetryAgain != 0 && try < maxAgain; try++ {
		r, e = sys(uintptr(op.Nr), a.arg(op, 0, data), a.arg(op, 1, data), a.arg(op, 2, data),
			a.arg(op, 3, data), a.arg(op, 4, data), a.arg(op, 5, data))
	}
	switch {
	case e == 0:
		a.set(op.Dst, uint64(r))
	case e == op.OkErrno:
		a.set(op.Dst, 0)
	default:
		return a.failed(op, pc, e)
	}
	return pc + 1, false
}

// compute is opLoad, opStore and opALU, which work on the registers and
// the data only.
//
//go:norace
//go:nocheckptr
func (a *arena) compute(op *Op, data unsafe.Pointer) {
	switch op.Kind {
	case opLoad:
		a.set(op.Dst, load(unsafe.Add(data, op.Args[0]), op.Nr))
	case opStore:
		store(unsafe.Add(data, op.Args[0]), op.Nr, uint64(a.arg(op, 1, data)))
	case opALU:
		x, y := uint64(a.arg(op, 0, data)), uint64(a.arg(op, 1, data))
		switch op.Nr {
		case aluOr:
			a.set(op.Dst, x|y)
		case aluAnd:
			a.set(op.Dst, x&y)
		case aluAndNot:
			a.set(op.Dst, x&^y)
		case aluAdd:
			a.set(op.Dst, x+y)
		}
	}
}

// holds evaluates condition c on x and y.
//
//go:norace
//go:nocheckptr
func holds(c uint32, x, y uintptr) bool {
	switch c {
	case condEq:
		return x == y
	case condNe:
		return x != y
	case condMaskSet:
		return x&y != 0
	case condMaskClr:
		return x&y == 0
	}
	return false
}

// load reads the width-byte value at p.
//
//go:norace
//go:nocheckptr
func load(p unsafe.Pointer, width uint32) uint64 {
	switch width {
	case 1:
		return uint64(*(*uint8)(p))
	case 2:
		return uint64(*(*uint16)(p))
	case 4:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p)
}

// store writes the width-byte value v at p.
//
//go:norace
//go:nocheckptr
func store(p unsafe.Pointer, width uint32, v uint64) {
	switch width {
	case 1:
		*(*uint8)(p) = uint8(v)
	case 2:
		*(*uint16)(p) = uint16(v)
	case 4:
		*(*uint32)(p) = uint32(v)
	default:
		*(*uint64)(p) = v
	}
}

// fdPath writes "/proc/self/fd/N\x00" to the fdPathSize bytes at p.
//
//go:norace
//go:nocheckptr
func fdPath(p unsafe.Pointer, fd uint64) {
	const prefix = "/proc/self/fd/"
	b := (*[fdPathSize]byte)(p)
	n := copyString(b[:], prefix)
	var digits [20]byte
	d := len(digits)
	for {
		d--
		digits[d] = byte('0' + fd%10)
		fd /= 10
		if fd == 0 {
			break
		}
	}
	for ; d < len(digits) && n < len(b)-1; d++ {
		b[n] = digits[d]
		n++
	}
	b[n] = 0
}

// copyString is copy(dst, src) as a loop: with the race detector on, the
// built-in becomes a call into the runtime, which is not there.
//
//go:norace
//go:nocheckptr
func copyString(dst []byte, src string) int {
	n := 0
	for ; n < len(dst) && n < len(src); n++ {
		dst[n] = src[n]
	}
	return n
}
