//go:build linux && (amd64 || arm64)

package initproc

import (
	"syscall"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// This file and child_*.go run in the init process, which has no Go
// runtime: see the package documentation for the rules. Every function
// is go:norace and go:nocheckptr, since the race detector's and the
// pointer checker's hooks are runtime calls.

// sys makes a raw system call and returns its result and errno.
//
//go:norace
//go:nocheckptr
func sys(nr, a1, a2, a3, a4, a5, a6 uintptr) (uintptr, uint32) {
	r, _, e := syscall.RawSyscall6(nr, a1, a2, a3, a4, a5, a6)
	return r, uint32(e)
}

// exit ends the init process.
//
//go:norace
//go:nocheckptr
func exit(code int) {
	for {
		syscall.RawSyscall(unix.SYS_EXIT_GROUP, uintptr(code), 0, 0)
	}
}

// childMain is the init process from its first instruction on the arena's
// stack (see enterChild): the preamble Start asked for, then the program
// from descriptor stageconfig.ConfigFD. It never returns.
//
//go:norace
//go:nocheckptr
func childMain(a *arena) {
	// The supervisor dies, so does the run. (Without a PID namespace a
	// supervisor already gone leaves the config pipe closed: the program
	// read below then ends the child.)
	sys(unix.SYS_PRCTL, unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0, 0)
	if !childPlaceFiles(a) {
		exit(stageconfig.ExitFailure)
	}
	// Its own session and process group: no controlling terminal.
	sys(unix.SYS_SETSID, 0, 0, 0, 0, 0, 0)
	sys(unix.SYS_PRCTL, unix.PR_SET_NAME, uintptr(unsafe.Pointer(&a.pre.name[0])), 0, 0, 0, 0)
	if a.pre.unshare != 0 {
		childUnshare(a)
	}
	childUnmap(a)
	n, ok := childReadProgram(a, stageconfig.ConfigFD)
	if !ok {
		exit(stageconfig.ExitFailure)
	}
	exit(a.runProgram(n))
}

// childUnshare creates the namespaces of pre.unshare (Attr.Unshare) and
// tells the supervisor on the report descriptor (see ReadUnshared): 0 once
// done, else the errno, and then the child ends: its program counts on
// them.
//
//go:norace
//go:nocheckptr
func childUnshare(a *arena) {
	_, e := sys(unix.SYS_UNSHARE, a.pre.unshare, 0, 0, 0, 0, 0)
	word := [1]byte{byte(e)}
	if e != 0 && word[0] == 0 {
		word[0] = byte(unix.EINVAL) // an errno past 255, never seen
	}
	for {
		_, we := sys(unix.SYS_WRITE, uintptr(a.pre.report), uintptr(unsafe.Pointer(&word[0])), 1, 0, 0, 0)
		if we != uint32(unix.EINTR) {
			break
		}
	}
	if e != 0 {
		exit(stageconfig.ExitFailure)
	}
}

// childPlaceFiles puts the supervisor's descriptors pre.files at 0, 1, 2,
// ..., close-on-exec from 3 on, and closes every other descriptor the
// fork copied, also a slot given -1 (none). Descriptors in the way are
// first moved above the slots, so that placing one never overwrites
// another.
//
//go:norace
//go:nocheckptr
func childPlaceFiles(a *arena) bool {
	n := uintptr(a.pre.nfiles)
	if n > maxFiles {
		return false
	}
	for i := uintptr(0); i < n; i++ {
		if a.pre.files[i] < 0 {
			continue
		}
		fd := uintptr(a.pre.files[i])
		if fd < n && fd != i {
			nfd, e := sys(unix.SYS_FCNTL, fd, unix.F_DUPFD_CLOEXEC, n, 0, 0, 0)
			if e != 0 {
				return false
			}
			a.pre.files[i] = int32(nfd)
		}
	}
	for i := uintptr(0); i < n; i++ {
		fd := uintptr(a.pre.files[i])
		var e uint32
		switch {
		case a.pre.files[i] < 0:
			// Nothing to place: whatever the fork left there goes (no
			// slot's descriptor is there, the loop above moved them).
			sys(unix.SYS_CLOSE, i, 0, 0, 0, 0, 0)
		case fd == i && i > 2:
			_, e = sys(unix.SYS_FCNTL, fd, unix.F_SETFD, unix.FD_CLOEXEC, 0, 0, 0)
		case fd == i:
			_, e = sys(unix.SYS_FCNTL, fd, unix.F_SETFD, 0, 0, 0, 0)
		case i > 2:
			_, e = sys(unix.SYS_DUP3, fd, i, unix.O_CLOEXEC, 0, 0, 0)
		default:
			_, e = sys(unix.SYS_DUP3, fd, i, 0, 0, 0, 0)
		}
		if e != 0 {
			return false
		}
	}
	if _, e := sys(unix.SYS_CLOSE_RANGE, n, uintptr(closeRangeAll), 0, 0, 0, 0); e == 0 {
		return true
	}
	return childCloseFrom(a, n)
}

// childCloseFrom closes every descriptor from lo on, listing them in
// /proc/self/fd, for kernels before 5.9 (no close_range(2)).
//
//go:norace
//go:nocheckptr
func childCloseFrom(a *arena, lo uintptr) bool {
	path := a.scratch[:]
	copyString(path, "/proc/self/fd\x00")
	dir, e := sys(unix.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&path[0])), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return false
	}
	buf := a.scratch[64:]
	for {
		n, e := sys(unix.SYS_GETDENTS64, dir, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		if e != 0 {
			return false
		}
		if n == 0 {
			break
		}
		for off := uintptr(0); off+19 < n; {
			reclen := uintptr(buf[off+16]) | uintptr(buf[off+17])<<8
			if reclen == 0 {
				return false
			}
			fd, digits := uintptr(0), 0
			for i := off + 19; i < off+reclen && i < n && buf[i] != 0; i++ {
				c := buf[i]
				if c < '0' || c > '9' {
					digits = -1
					break
				}
				fd = fd*10 + uintptr(c-'0')
				digits++
			}
			if digits > 0 && fd >= lo && fd != dir {
				sys(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
			}
			off += reclen
		}
	}
	sys(unix.SYS_CLOSE, dir, 0, 0, 0, 0, 0)
	return true
}

// childUnmap drops the supervisor's memory that fork(2) copied. The
// process's first stack, which holds its argv and environment (readable
// as /proc/1/cmdline by anyone), always goes. With pre.full everything
// but pre.keep goes too (the supervisor's heap, its globals, its threads'
// stacks): then the init process holds nothing of the supervisor but the
// executable's code and constants, and the script's fork copies nothing.
// That needs no other rseq area to be registered on this thread (a C
// library's, in a program linked with cgo, would be written to by the
// kernel at the next preemption): registering the arena's own tells. Where
// another one is, the copy stays, unreadable to the run (the init process
// is not dumpable and its memory belongs to the supervisor's user
// namespace; see docs/security.md).
//
//go:norace
//go:nocheckptr
func childUnmap(a *arena) {
	if a.pre.stack[1] > a.pre.stack[0] {
		sys(unix.SYS_MUNMAP, a.pre.stack[0], a.pre.stack[1]-a.pre.stack[0], 0, 0, 0, 0)
	}
	if a.pre.full == 0 {
		return
	}
	rs := (uintptr(unsafe.Pointer(&a.rseq[0])) + 31) &^ 31
	if _, e := sys(unix.SYS_RSEQ, rs, 32, 0, rseqSignature, 0, 0); e != 0 && e != uint32(unix.ENOSYS) {
		return
	}
	lo := uintptr(0)
	for i := int32(0); i < a.pre.nkeep && i < maxKeep; i++ {
		k := a.pre.keep[i]
		if k[0] > lo {
			sys(unix.SYS_MUNMAP, lo, k[0]-lo, 0, 0, 0, 0)
		}
		if k[1] > lo {
			lo = k[1]
		}
	}
	// The top of the address space depends on the kernel's
	// configuration; munmap refuses a range past it (EINVAL).
	for _, top := range [...]uintptr{1<<57 - 4096, 1 << 56, 1 << 52, 1 << 48, 1<<47 - 4096, 1 << 47, 1 << 42, 1 << 39} {
		if top > lo {
			if _, e := sys(unix.SYS_MUNMAP, lo, top-lo, 0, 0, 0, 0); e == 0 {
				return
			}
		}
	}
}

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

// verify checks a program of n bytes at p and returns 0, or the number of
// the first check that failed. It reads nothing outside the n bytes.
//
//go:norace
//go:nocheckptr
func verify(p unsafe.Pointer, n int) int {
	hsize := int(unsafe.Sizeof(header{}))
	opsize := int(unsafe.Sizeof(Op{}))
	if n < hsize || uintptr(p)%8 != 0 {
		return 1
	}
	h := (*header)(p)
	switch {
	case h.magic != progMagic || h.version != progVersion:
		return 2
	case int(h.size) != n:
		return 3
	case h.nops > uint32(n/opsize) || h.nrelocs > uint32(n/4):
		return 4
	}
	relocOff := hsize + int(h.nops)*opsize
	if relocOff+4*int(h.nrelocs) > int(h.dataOff) || h.dataOff%8 != 0 || uint64(h.dataOff)+uint64(h.dataLen) != uint64(n) {
		return 5
	}
	data := unsafe.Add(p, h.dataOff)
	dlen := uint64(h.dataLen)
	for i := 0; i < int(h.nrelocs); i++ {
		off := uint64(*(*uint32)(unsafe.Add(p, relocOff+4*i)))
		if off%8 != 0 || off+8 > dlen {
			return 6
		}
		if v := *(*uint64)(unsafe.Add(data, off)); v != 0 && v-1 >= dlen {
			return 7
		}
	}
	block := -1 // the open block's opBegin
	for i := 0; i < int(h.nops); i++ {
		op := (*Op)(unsafe.Add(p, hsize+i*opsize))
		if op.Kind == 0 || op.Kind >= opKinds || op.Dst >= NumRegs {
			return 8
		}
		for j := 0; j < 6; j++ {
			switch (op.ArgKinds >> (2 * j)) & 3 {
			case argImm:
			case argData:
				if op.Args[j] >= dlen {
					return 9
				}
			case argReg:
				if op.Args[j] >= NumRegs {
					return 10
				}
			default:
				return 11
			}
		}
		jumps := op.SkipErr != 0 || op.Flags&flagErrToReg != 0
		switch op.Kind {
		case opLoad, opStore:
			if !dataArg(op, 0, dlen, uint64(op.Nr)) || (op.Nr != 1 && op.Nr != 2 && op.Nr != 4 && op.Nr != 8) {
				return 12
			}
		case opALU:
			if op.Nr < aluOr || op.Nr > aluAdd {
				return 13
			}
		case opSkipIf, opAssert:
			if op.Nr < condEq || op.Nr > condMaskClr {
				return 14
			}
			jumps = jumps || op.Kind == opSkipIf
		case opSkipLayers:
			jumps = true
		case opFdPath:
			if !dataArg(op, 1, dlen, fdPathSize) {
				return 15
			}
		case opLandlockRule:
			if !dataArg(op, 1, dlen, 1) || !terminated(data, op.Args[1], dlen) {
				return 16
			}
		case opRemount:
			if !dataArg(op, 0, dlen, 1) {
				return 24
			}
		case opExec, opReaper:
			if !dataArg(op, 0, dlen, uint64(unsafe.Sizeof(launchData{}))) {
				return 17
			}
		case opBegin:
			if block >= 0 || int(op.Skip) <= i || int(op.Skip) >= int(h.nops) {
				return 18
			}
			end := (*Op)(unsafe.Add(p, hsize+int(op.Skip)*opsize))
			if end.Kind != opEnd {
				return 19
			}
			block = i
			continue
		case opEnd:
			if block < 0 || (*Op)(unsafe.Add(p, hsize+block*opsize)).Skip != uint32(i) {
				return 20
			}
			block = -1
		}
		if jumps && (int(op.Skip) <= i || int(op.Skip) > int(h.nops)) {
			return 21
		}
		// A jump may not leave or enter a block: its layers would be
		// neither applied nor failed.
		if jumps && block >= 0 && int(op.Skip) > int((*Op)(unsafe.Add(p, hsize+block*opsize)).Skip) {
			return 22
		}
	}
	if block >= 0 {
		return 23
	}
	return 0
}

// fdPathSize is the size of opFdPath's buffer.
const fdPathSize = 32

// dataArg reports whether argument i of op is a data reference with size
// bytes inside the data.
//
//go:norace
//go:nocheckptr
func dataArg(op *Op, i int, dlen, size uint64) bool {
	return (op.ArgKinds>>(2*i))&3 == argData && op.Args[i]+size <= dlen && op.Args[i]+size >= op.Args[i]
}

// terminated reports whether the data holds a NUL from off on.
//
//go:norace
//go:nocheckptr
func terminated(data unsafe.Pointer, off, dlen uint64) bool {
	for ; off < dlen; off++ {
		if *(*byte)(unsafe.Add(data, off)) == 0 {
			return true
		}
	}
	return false
}

// relocate turns the pointer slots of a verified program into addresses.
//
//go:norace
//go:nocheckptr
func relocate(p, data unsafe.Pointer) {
	h := (*header)(p)
	relocs := unsafe.Add(p, int(unsafe.Sizeof(header{}))+int(h.nops)*int(unsafe.Sizeof(Op{})))
	for i := 0; i < int(h.nrelocs); i++ {
		slot := (*uint64)(unsafe.Add(data, *(*uint32)(unsafe.Add(relocs, 4*i))))
		if *slot != 0 {
			*slot = uint64(uintptr(data)) + *slot - 1
		}
	}
}

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
		next := pc + 1
		switch op.Kind {
		case opSys:
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
				var stop bool
				if next, stop = a.failed(op, pc, e); stop {
					return stageconfig.ExitFailure
				}
			}
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
				if a.fail(op, pc, kind, 0) {
					return stageconfig.ExitFailure
				}
			}
		case opFail:
			var stop bool
			if next, stop = a.failed(op, pc, uint32(op.Args[0])); stop {
				return stageconfig.ExitFailure
			}
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
				var stop bool
				if next, stop = a.failed(op, pc, e); stop {
					return stageconfig.ExitFailure
				}
			}
		case opRemount:
			if e := a.remount(op, data); e != 0 {
				var stop bool
				if next, stop = a.failed(op, pc, e); stop {
					return stageconfig.ExitFailure
				}
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
		pc = next
	}
	return 0
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

// failed handles the failure of op (at pc) with errno e and returns the
// next operation, or stop when the run is refused (the report is sent).
//
//go:norace
//go:nocheckptr
func (a *arena) failed(op *Op, pc, e uint32) (next uint32, stop bool) {
	switch {
	case op.Flags&flagIgnoreErr != 0:
		return pc + 1, false
	case op.SkipErr != 0 && e == op.SkipErr:
		return op.Skip, false
	case op.Flags&flagErrToReg != 0:
		a.set(op.Dst, uint64(e))
		return op.Skip, false
	}
	kind := uint32(FailIncomplete)
	unavail := op.Flags&flagUnavailAny != 0 || op.Unavail&errnoBit(e) != 0 ||
		op.UnavailUnless&errnoBit(e) != 0 && a.vm.applied&op.Unless != op.Unless
	switch {
	case op.Changed&errnoBit(e) != 0:
		kind = FailChanged
	case unavail:
		kind = FailMissing
	}
	if kind == FailMissing && a.vm.inBlock != 0 {
		a.record(op, pc, kind, e)
		a.vm.missing |= a.vm.block
		a.vm.inBlock = 0
		// Past the block's end: its layers are not applied.
		return a.vm.blockEnd + 1, false
	}
	return pc + 1, a.fail(op, pc, kind, e)
}

// fail records a failure that refuses the run (kind FailMissing outside a
// block too), sends the report and reports true: the caller stops.
//
//go:norace
//go:nocheckptr
func (a *arena) fail(op *Op, pc, kind, e uint32) bool {
	if a.vm.inBlock == 0 || op.Layers == 0 {
		if kind != FailChanged {
			kind = FailFatal
		}
	}
	a.record(op, pc, kind, e)
	a.vm.report.Stopped = 1
	a.sendReport(uintptr(a.pre.report))
	return true
}

// fatal sends a report that refuses the run for a failure before any
// operation (a program that does not verify).
//
//go:norace
//go:nocheckptr
func (a *arena) fatal(op, e uint32) {
	r := &a.vm.report
	if r.NFail < maxFails {
		r.Fails[r.NFail] = Failure{Kind: FailFatal, Op: op, Errno: e}
		r.NFail++
	}
	r.Stopped = 1
	a.sendReport(uintptr(a.pre.report))
}

// record adds a failure to the report.
//
//go:norace
//go:nocheckptr
func (a *arena) record(op *Op, pc, kind, e uint32) {
	r := &a.vm.report
	if r.NFail < maxFails {
		r.Fails[r.NFail] = Failure{Layers: op.Layers, Kind: kind, Op: pc, Errno: e}
		r.NFail++
	}
}

// sendReport writes the report on fd, in one write (it is smaller than
// PIPE_BUF, so it arrives whole).
//
//go:norace
//go:nocheckptr
func (a *arena) sendReport(fd uintptr) {
	r := &a.vm.report
	r.Magic = reportMagic
	r.Applied, r.Missing = a.vm.applied, a.vm.missing
	for {
		_, e := sys(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(r)), unsafe.Sizeof(*r), 0, 0, 0)
		if e != uint32(unix.EINTR) {
			return
		}
	}
}

// report is opReport: the layer report on Args[0]; then, when the mode Nr
// asks for it, the wait for the supervisor's go-ahead on Args[1], which
// ends the init process unless it is stageconfig.GoByte.
//
//go:norace
//go:nocheckptr
func (a *arena) report(op *Op, data unsafe.Pointer) {
	wait := op.Nr == WaitAlways || op.Nr == WaitIfMissing && a.vm.missing != 0
	if wait {
		a.vm.report.Waiting = 1
	}
	a.sendReport(a.arg(op, 0, data))
	a.vm.report.Waiting = 0
	if !wait {
		return
	}
	var b [1]byte
	for {
		n, e := sys(unix.SYS_READ, a.arg(op, 1, data), uintptr(unsafe.Pointer(&b[0])), 1, 0, 0, 0)
		if e == uint32(unix.EINTR) {
			continue
		}
		if e != 0 || n != 1 || b[0] != stageconfig.GoByte {
			exit(stageconfig.ExitFailure)
		}
		return
	}
}

// landlockRule is opLandlockRule; it returns the errno of a failure, or 0.
//
//go:norace
//go:nocheckptr
func (a *arena) landlockRule(op *Op, data unsafe.Pointer) uint32 {
	path := uintptr(unsafe.Add(data, op.Args[1]))
	var fd uintptr
	var e uint32
	if op.Flags&flagResolveRoot != 0 {
		how := (*unix.OpenHow)(unsafe.Pointer(&a.scratch[0]))
		*how = unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
		// EAGAIN: a ".." (of a symlink such as /etc/os-release ->
		// ../usr/lib/os-release) met a rename or mount anywhere on
		// the host meanwhile; openat2(2) says to try again.
		for try := 0; ; try++ {
			fd, e = sys(unix.SYS_OPENAT2, a.arg(op, 0, data), path, uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
			if e != uint32(unix.EAGAIN) || try == maxAgain {
				break
			}
		}
	} else {
		fd, e = sys(unix.SYS_OPENAT, atFDCWD, path, unix.O_PATH|unix.O_CLOEXEC, 0, 0, 0)
	}
	if e == uint32(unix.ENOENT) && op.Flags&flagOptional != 0 {
		return 0
	}
	if e != 0 {
		return e
	}
	st := (*unix.Stat_t)(unsafe.Pointer(&a.scratch[64]))
	access := op.Args[3]
	if _, e = sys(sysFstat, fd, uintptr(unsafe.Pointer(st)), 0, 0, 0, 0); e == 0 && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access = op.Args[4]
	}
	if e == 0 && access != 0 {
		attr := (*unix.LandlockPathBeneathAttr)(unsafe.Pointer(&a.scratch[0]))
		*attr = unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
		_, e = sys(unix.SYS_LANDLOCK_ADD_RULE, a.arg(op, 2, data), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(attr)), 0, 0, 0)
	}
	sys(unix.SYS_CLOSE, fd, 0, 0, 0, 0, 0)
	return e
}

// maxAgain bounds the retries of a call that failed with EAGAIN.
const maxAgain = 64

// atFDCWD is AT_FDCWD as a system call argument.
const atFDCWD = ^uintptr(99) // -100

// remount is opRemount; it returns the errno of a failure, or 0.
//
//go:norace
//go:nocheckptr
func (a *arena) remount(op *Op, data unsafe.Pointer) uint32 {
	path := uintptr(unsafe.Add(data, op.Args[0]))
	st := (*unix.Statfs_t)(unsafe.Pointer(&a.scratch[0]))
	if _, e := sys(unix.SYS_STATFS, path, uintptr(unsafe.Pointer(st)), 0, 0, 0, 0); e != 0 {
		return e
	}
	flags := uintptr(unix.MS_BIND|unix.MS_REMOUNT) | uintptr(op.Args[1])
	f := uintptr(st.Flags)
	for _, m := range [...][2]uintptr{
		{unix.ST_RDONLY, unix.MS_RDONLY},
		{unix.ST_NOSUID, unix.MS_NOSUID},
		{unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME},
		{unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if f&m[0] != 0 {
			flags |= m[1]
		}
	}
	var empty [1]byte
	_, e := sys(unix.SYS_MOUNT, uintptr(unsafe.Pointer(&empty[0])), path, uintptr(unsafe.Pointer(&empty[0])), flags, 0, 0)
	return e
}

// childReceive is a pooled init process's first step once a run takes it:
// the run's descriptors come with the first byte on the config socket
// (see run's pooledInit.handOver), and are moved where a process started for the run
// would have them: stdin at 0 when the header says so, the rest from
// stageconfig.FirstTreeFD on, close-on-exec. Each is first moved above
// those slots, so that placing one cannot overwrite another; a slot in use
// fails.
//
//go:norace
//go:nocheckptr
func childReceive(a *arena) bool {
	var head [1]byte
	iov := [2]uint64{uint64(uintptr(unsafe.Pointer(&head[0]))), 1}
	oob := a.scratch[:unix.CmsgSpace(stageconfig.MaxPassedFDs*4)]
	var msg unix.Msghdr
	msg.Iov = (*unix.Iovec)(unsafe.Pointer(&iov))
	msg.Iovlen = 1
	msg.Control = &oob[0]
	msg.Controllen = uint64(len(oob))
	n, e := sys(unix.SYS_RECVMSG, stageconfig.ConfigFD, uintptr(unsafe.Pointer(&msg)), unix.MSG_CMSG_CLOEXEC, 0, 0, 0)
	if e != 0 || n != 1 || msg.Flags&unix.MSG_CTRUNC != 0 || head[0] != stageconfig.PassNoStdin && head[0] != stageconfig.PassWithStdin {
		return false
	}
	var fds [stageconfig.MaxPassedFDs]int32
	nfds := 0
	hsize := uint64(unix.CmsgLen(0))
	for off := uint64(0); off+hsize <= msg.Controllen; {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[off]))
		if h.Len < hsize || off+h.Len > msg.Controllen {
			return false
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_RIGHTS {
			for d := off + hsize; d+4 <= off+h.Len && nfds < len(fds); d += 4 {
				fds[nfds] = *(*int32)(unsafe.Pointer(&oob[d]))
				nfds++
			}
		}
		off += (h.Len + 7) &^ 7
	}
	if head[0] == stageconfig.PassWithStdin && nfds == 0 {
		return false
	}
	above := uintptr(stageconfig.FirstTreeFD + nfds)
	for i := 0; i < nfds; i++ {
		hi, e := sys(unix.SYS_FCNTL, uintptr(fds[i]), unix.F_DUPFD_CLOEXEC, above, 0, 0, 0)
		if e != 0 {
			return false
		}
		sys(unix.SYS_CLOSE, uintptr(fds[i]), 0, 0, 0, 0, 0)
		fds[i] = int32(hi)
	}
	first := 0
	if head[0] == stageconfig.PassWithStdin {
		if _, e := sys(unix.SYS_DUP3, uintptr(fds[0]), 0, 0, 0, 0, 0); e != 0 {
			return false
		}
		sys(unix.SYS_CLOSE, uintptr(fds[0]), 0, 0, 0, 0, 0)
		first = 1
	}
	for i := first; i < nfds; i++ {
		slot := uintptr(stageconfig.FirstTreeFD + i - first)
		if _, e := sys(unix.SYS_FCNTL, slot, unix.F_GETFD, 0, 0, 0, 0); e != uint32(unix.EBADF) {
			return false
		}
		if _, e := sys(unix.SYS_DUP3, uintptr(fds[i]), slot, unix.O_CLOEXEC, 0, 0, 0); e != 0 {
			return false
		}
		sys(unix.SYS_CLOSE, uintptr(fds[i]), 0, 0, 0, 0, 0)
	}
	return true
}
