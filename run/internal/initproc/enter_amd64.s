//go:build linux

#include "textflag.h"

// func cloneChild(flags, stack, gp, fn, arg uintptr) (pid uintptr, errno uintptr)
//
// Makes the clone(2) system call with stack as the child's stack. The
// parent returns the pid, or the errno. The child starts on the arena's
// stack, never on the caller's (a goroutine stack, in memory the fork
// does not copy; see forkChild): it loads the g register (R14) with the
// arena's fake g, whose stack bounds make the compiler's stack checks
// pass, and calls fn, a Go function in the internal ABI (first argument in
// AX, X15 zero). fn never returns; if it did, the process exits. The
// system call keeps every register but AX, CX and R11, so the child finds
// gp, fn and arg in BX, R12 and R13.
TEXT ·cloneChild(SB),NOSPLIT|NOFRAME,$0-56
	MOVQ	flags+0(FP), DI
	MOVQ	stack+8(FP), SI
	MOVQ	gp+16(FP), BX
	MOVQ	fn+24(FP), R12
	MOVQ	arg+32(FP), R13
	XORQ	DX, DX	// parent_tid
	XORQ	R10, R10	// child_tid
	XORQ	R8, R8	// tls
	MOVQ	$56, AX	// clone
	SYSCALL
	CMPQ	AX, $0
	JEQ	child
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	NEGQ	AX
	MOVQ	$0, pid+40(FP)
	MOVQ	AX, errno+48(FP)
	RET
ok:
	MOVQ	AX, pid+40(FP)
	MOVQ	$0, errno+48(FP)
	RET
child:
	MOVQ	BX, R14
	MOVQ	R13, AX
	XORPS	X15, X15
	CALL	R12
	MOVQ	$126, DI
	MOVQ	$231, AX	// exit_group
	SYSCALL
	INT	$3
