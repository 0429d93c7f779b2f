//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"

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

// logOnClosedStd reports whether path, an --audit-log, names stdout or
// stderr while that descriptor was closed at start (closedAtStart), as
// /dev/stderr, /dev/fd/2 or /proc/self/fd/2 do: the file opened would be
// the /dev/null the Go runtime put there, and the record would vanish.
// The links are followed by name (at most 8), since following /dev/fd/2
// itself already lands on /dev/null. A log on /dev/null named as such, or
// on a descriptor the shell pointed at /dev/null, is the caller's choice.
func logOnClosedStd(path string) bool {
	for range 8 {
		abs, err := filepath.Abs(path)
		if err != nil {
			return false
		}
		if fd := stdDescriptor(abs); fd != nil {
			return closedAtStart(fd)
		}
		target, err := os.Readlink(abs)
		if err != nil {
			return false
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(abs), target)
		}
		path = target
	}
	return false
}

// stdDescriptor returns os.Stdout or os.Stderr when path is a name of
// this process's descriptor 1 or 2 under /dev/fd or /proc, else nil.
func stdDescriptor(path string) *os.File {
	dir, name := filepath.Split(path)
	switch dir {
	case "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/":
	default:
		return nil
	}
	switch name {
	case "1":
		return os.Stdout
	case "2":
		return os.Stderr
	}
	return nil
}
