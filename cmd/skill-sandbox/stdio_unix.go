//go:build unix

package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// closedAtStart reports whether f (stdout or stderr) was closed when the
// program started (as with "2>&-"). The Go runtime then opens /dev/null on
// the descriptor, read-write, so writes "succeed" and vanish: an audit
// record written there would be lost without an error. A shell's
// "2>/dev/null" opens it write-only, which is the user's choice and is not
// reported; "2<>/dev/null" cannot be told apart from a closed descriptor.
func closedAtStart(f *os.File) bool {
	fd := int(f.Fd())
	var st, null unix.Stat_t
	if unix.Fstat(fd, &st) != nil || unix.Stat("/dev/null", &null) != nil {
		return false
	}
	if st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Rdev != null.Rdev {
		return false
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_ACCMODE == unix.O_RDWR
}
