//go:build linux && (amd64 || arm64)

package initproc

import (
	"unsafe"
)

// verify checks a program of n bytes at p and returns 0, or the number of
// the first check that failed. It reads nothing outside the n bytes.
//
//go:norace
//go:nocheckptr
func verify(p unsafe.Pointer, n int) int {
	if c := verifyLayout(p, n); c != 0 {
		return c
	}
	return verifyOps(p)
}

// verifyLayout is verify's checks of the header and the relocations
// (1 to 7).
//
//go:norace
//go:nocheckptr
func verifyLayout(p unsafe.Pointer, n int) int {
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
	return 0
}

// verifyOps is verify's checks of the operations (8 to 24), of a program
// whose layout verifyLayout accepted.
//
//go:norace
//go:nocheckptr
func verifyOps(p unsafe.Pointer) int {
	hsize := int(unsafe.Sizeof(header{}))
	opsize := int(unsafe.Sizeof(Op{}))
	h := (*header)(p)
	data := unsafe.Add(p, h.dataOff)
	dlen := uint64(h.dataLen)
	block := -1 // the open block's opBegin
	for i := 0; i < int(h.nops); i++ {
		op := (*Op)(unsafe.Add(p, hsize+i*opsize))
		if c := verifyArgs(op, dlen); c != 0 {
			return c
		}
		jumps, c := verifyKind(op, data, dlen)
		if c != 0 {
			return c
		}
		switch op.Kind {
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

// verifyArgs is verify's checks of op's kind, result register and
// arguments (8 to 11), in data of dlen bytes.
//
//go:norace
//go:nocheckptr
func verifyArgs(op *Op, dlen uint64) int {
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
	return 0
}

// verifyKind is verify's checks of what op's kind needs of its
// arguments (12 to 17, and 24), in data of dlen bytes; jumps says
// whether op may jump (to Skip), which verifyOps checks.
//
//go:norace
//go:nocheckptr
func verifyKind(op *Op, data unsafe.Pointer, dlen uint64) (jumps bool, code int) {
	jumps = op.SkipErr != 0 || op.Flags&flagErrToReg != 0
	switch op.Kind {
	case opLoad, opStore:
		if !dataArg(op, 0, dlen, uint64(op.Nr)) || (op.Nr != 1 && op.Nr != 2 && op.Nr != 4 && op.Nr != 8) {
			return jumps, 12
		}
	case opALU:
		if op.Nr < aluOr || op.Nr > aluAdd {
			return jumps, 13
		}
	case opSkipIf, opAssert:
		if op.Nr < condEq || op.Nr > condMaskClr {
			return jumps, 14
		}
		jumps = jumps || op.Kind == opSkipIf
	case opSkipLayers:
		jumps = true
	case opFdPath:
		if !dataArg(op, 1, dlen, fdPathSize) {
			return jumps, 15
		}
	case opLandlockRule:
		if !dataArg(op, 1, dlen, 1) || !terminated(data, op.Args[1], dlen) {
			return jumps, 16
		}
	case opRemount:
		if !dataArg(op, 0, dlen, 1) {
			return jumps, 24
		}
	case opExec, opReaper:
		if !dataArg(op, 0, dlen, uint64(unsafe.Sizeof(launchData{}))) {
			return jumps, 17
		}
	}
	return jumps, 0
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
