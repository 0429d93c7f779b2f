//go:build linux

#include "textflag.h"

// func enterChild(stack, gp, fn, arg uintptr)
//
// Runs in the child right after clone(2): switches to the arena's stack,
// loads the g register (R14) with the arena's fake g, whose stack bounds
// make the compiler's stack checks pass, and calls fn, a Go function in
// the internal ABI (first argument in AX, X15 zero). fn never returns; if
// it did, the process exits.
TEXT ·enterChild(SB),NOSPLIT|NOFRAME,$0-32
	MOVQ	stack+0(FP), CX
	MOVQ	gp+8(FP), R14
	MOVQ	fn+16(FP), BX
	MOVQ	arg+24(FP), AX
	MOVQ	CX, SP
	XORPS	X15, X15
	CALL	BX
	MOVQ	$126, DI
	MOVQ	$231, AX	// exit_group
	SYSCALL
	INT	$3
