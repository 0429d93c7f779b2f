//go:build linux || darwin

package run

import (
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Permission bits checked by mayAccess.
const (
	permRead  = 4
	permExec  = 1
	permRX    = permRead | permExec
	permOwner = 6 // shift of the owner bits
	permGroup = 3 // shift of the group bits
)

// checkReachable verifies, when the sandbox runs as another identity than
// the caller (the caller is root), that the skill folder, the script and
// the interpreter are reachable by that identity, so the run fails with a
// clear message instead of a permission error from inside the sandbox.
// Typical cause: a test's t.TempDir() or a checkout under /root (mode 0700).
func checkReachable(uid, gid int, skill, script, program string) error {
	if uid == os.Geteuid() {
		return nil
	}
	for _, c := range []struct {
		path string
		want uint32
	}{{skill, permRX}, {script, permRead}, {program, permExec}} {
		if bad := unreachable(c.path, uid, gid, c.want); bad != "" {
			return errUnreachable(bad, uid)
		}
	}
	return nil
}

// unreachable returns the first element of path (an ancestor folder
// lacking search permission, or path itself lacking want) that uid:gid
// cannot use, or "".
func unreachable(path string, uid, gid int, want uint32) string {
	dir := filepath.Dir(path)
	for {
		if !mayAccess(dir, uid, gid, permExec) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if !mayAccess(path, uid, gid, want) {
		return path
	}
	return ""
}

// mayAccess applies the classic owner/group/other rule to path's mode
// (stat follows symlinks, as the kernel would).
func mayAccess(path string, uid, gid int, want uint32) bool {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return false
	}
	mode := uint32(st.Mode) & 0o777
	switch {
	case int(st.Uid) == uid:
		mode >>= permOwner
	case int(st.Gid) == gid:
		mode >>= permGroup
	}
	return mode&want == want
}

// errUnreachable explains the usual cause when the caller is root.
func errUnreachable(path string, uid int) error {
	return &unreachableError{path: path, uid: uid}
}

// writableFolder returns the error mkdir(2) would meet creating a folder
// in dir as the caller, or nil: the kernel answers (faccessat(2) with
// AT_EACCESS), so groups, ACLs and a read-only file system count.
func writableFolder(dir string) error {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.ENOTDIR
	}
	return unix.Faccessat(unix.AT_FDCWD, dir, unix.W_OK|unix.X_OK, unix.AT_EACCESS)
}
