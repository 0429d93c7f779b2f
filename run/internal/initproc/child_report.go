//go:build linux && (amd64 || arm64)

package initproc

import (
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

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
