//go:build linux && (amd64 || arm64)

package seccomp

import "golang.org/x/sys/unix"

// The rules below keep a script from leaving behind a file that gives
// power to whoever runs or opens it later: a root caller's write grants
// are id-mapped, so what a script creates there belongs to root on the
// host, and a set-uid bit on it would make a set-uid-root program (see
// docs/grants.md). The kernel lets a file's owner set these bits, and
// the mount's nosuid only counts inside the sandbox.
//
//	system call(s)                                 result
//	---------------------------------------------  ------------------------
//	chmod, fchmod, fchmodat, fchmodat2 with        EPERM  (set-id bits)
//	  S_ISUID or S_ISGID in the mode
//	open, openat, creat creating a file (O_CREAT,  EPERM  (the same, at creation)
//	  O_TMPFILE) with S_ISUID or S_ISGID
//	mknod, mknodat of a character or block         EPERM  (device nodes; set-id
//	  device, or with S_ISUID or S_ISGID                   regular files)
//	openat2                                        ENOSYS (its mode is in memory, not
//	                                                       checkable: libc falls back to openat)
//
// A file capability (the security.capability extended attribute) is not
// checkable here (the name is in memory): it needs CAP_SETFCAP, which the
// script does not have (LayerCaps). io_uring, which could open files
// past these rules, is refused by the deny list.

// Mode bits and file types the rules test.
const (
	setIDBits = unix.S_ISUID | unix.S_ISGID
	oTmpfile  = unix.O_TMPFILE &^ unix.O_DIRECTORY // __O_TMPFILE: O_TMPFILE includes O_DIRECTORY
)

// setIDRules assembles the rules above; archSetIDCalls adds the calls
// only amd64 has.
func setIDRules() ([]block, error) {
	var a bpfAsm
	for _, c := range setIDCalls() {
		a.ifSyscall(c.nr, func() { c.assemble(&a) })
	}
	a.ifSyscall(unix.SYS_OPENAT2, func() { a.ret(retENOSYS) })
	return a.program()
}

// setIDCalls are the calls the rules test: those of both architectures,
// then archSetIDCalls.
func setIDCalls() []modeCall {
	return append([]modeCall{
		{nr: unix.SYS_FCHMOD, mode: seccompArg1, flags: -1},
		{nr: unix.SYS_FCHMODAT, mode: seccompArg2, flags: -1},
		{nr: unix.SYS_FCHMODAT2, mode: seccompArg2, flags: -1},
		{nr: unix.SYS_OPENAT, mode: seccompArg3, flags: seccompArg2},
		{nr: unix.SYS_MKNODAT, mode: seccompArg2, flags: -1, node: true},
	}, archSetIDCalls()...)
}

// modeCall is a system call with a mode argument the rules test.
type modeCall struct {
	nr    uint32
	mode  uint32 // offset of the mode argument
	flags int    // offset of open's flags, -1 for a call that always sets the mode
	node  bool   // mknod: also refuse device types
}

// assemble emits c's checks: a call that sets no mode (an open without
// O_CREAT or O_TMPFILE) is allowed whatever its mode argument holds.
func (c modeCall) assemble(a *bpfAsm) {
	if c.flags >= 0 {
		a.load(uint32(c.flags))
		a.emit(Jump(bpfJumpSet, unix.O_CREAT|oTmpfile, 0, 0), "", a.scoped("allow"))
	}
	if c.node {
		a.load(c.mode)
		a.and(unix.S_IFMT)
		a.jeq(unix.S_IFCHR, "deny")
		a.jeq(unix.S_IFBLK, "deny")
	}
	a.load(c.mode)
	a.emit(Jump(bpfJumpSet, setIDBits, 0, 0), "", a.scoped("allow"))
	a.label("deny")
	a.ret(retEPERM)
}
