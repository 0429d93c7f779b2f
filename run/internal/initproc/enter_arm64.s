//go:build linux

#include "textflag.h"

// func enterChild(stack, gp, fn, arg uintptr)
//
// Runs in the child right after clone(2): switches to the arena's stack,
// loads the g register (R28) with the arena's fake g, whose stack bounds
// make the compiler's stack checks pass, and calls fn, a Go function in
// the internal ABI (first argument in R0). fn never returns; if it did,
// the process exits.
TEXT ·enterChild(SB),NOSPLIT|NOFRAME,$0-32
	MOVD	stack+0(FP), R1
	MOVD	gp+8(FP), g
	MOVD	fn+16(FP), R2
	MOVD	arg+24(FP), R0
	MOVD	R1, RSP
	CALL	(R2)
	MOVD	$126, R0
	MOVD	$94, R8	// exit_group
	SVC
