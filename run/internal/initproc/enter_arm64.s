//go:build linux

#include "textflag.h"

// func cloneChild(flags, stack, gp, fn, arg uintptr) (pid uintptr, errno uintptr)
//
// Makes the clone(2) system call with stack as the child's stack. The
// parent returns the pid, or the errno. The child starts on the arena's
// stack, never on the caller's (a goroutine stack, in memory the fork
// does not copy; see forkChild): it loads the g register (R28) with the
// arena's fake g, whose stack bounds make the compiler's stack checks
// pass, and calls fn, a Go function in the internal ABI (first argument in
// R0). fn never returns; if it did, the process exits. The system call
// keeps every register but R0, so the child finds gp, fn and arg in R19,
// R20 and R21.
TEXT ·cloneChild(SB),NOSPLIT|NOFRAME,$0-56
	MOVD	flags+0(FP), R0
	MOVD	stack+8(FP), R1
	MOVD	gp+16(FP), R19
	MOVD	fn+24(FP), R20
	MOVD	arg+32(FP), R21
	MOVD	$0, R2	// parent_tid
	MOVD	$0, R3	// tls
	MOVD	$0, R4	// child_tid
	MOVD	$220, R8	// clone
	SVC
	CBZ	R0, child
	CMN	$4095, R0
	BCS	fail
	MOVD	R0, pid+40(FP)
	MOVD	$0, R1
	MOVD	R1, errno+48(FP)
	RET
fail:
	NEG	R0, R0
	MOVD	$0, R1
	MOVD	R1, pid+40(FP)
	MOVD	R0, errno+48(FP)
	RET
child:
	MOVD	R19, g
	MOVD	R21, R0
	CALL	(R20)
	MOVD	$126, R0
	MOVD	$94, R8	// exit_group
	SVC
