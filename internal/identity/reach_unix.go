//go:build linux || darwin

package identity

import (
	"os"
	"path/filepath"
	"syscall"
)

// Permission bits checked by MayAccess.
const (
	// PermRead is the read bit.
	PermRead = 4
	// PermExec is the execute (or, of a folder, search) bit.
	PermExec = 1
	// PermRX is read and execute.
	PermRX    = PermRead | PermExec
	permOwner = 6 // shift of the owner bits
	permGroup = 3 // shift of the group bits
)

// FirstUnreachable returns, when the sandbox runs as another identity
// than the caller (the caller is root), the first path of the skill
// folder, the script and the interpreter program (or an ancestor folder
// of one) that uid:gid cannot use, or "": the run then fails with a
// clear message instead of a permission error from inside the sandbox.
// Typical cause: a test's t.TempDir() or a checkout under /root (mode
// 0700).
func FirstUnreachable(uid, gid int, skill, script, program string) string {
	if uid == os.Geteuid() {
		return ""
	}
	for _, c := range []struct {
		path string
		want uint32
	}{{skill, PermRX}, {script, PermRead}, {program, PermExec}} {
		if bad := Unreachable(c.path, uid, gid, c.want); bad != "" {
			return bad
		}
	}
	return ""
}

// Unreachable returns the first element of path (an ancestor folder
// lacking search permission, or path itself lacking want) that uid:gid
// cannot use, or "".
func Unreachable(path string, uid, gid int, want uint32) string {
	dir := filepath.Dir(path)
	for {
		if !MayAccess(dir, uid, gid, PermExec) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if !MayAccess(path, uid, gid, want) {
		return path
	}
	return ""
}

// MayAccess applies the classic owner/group/other rule to path's mode
// (stat follows symlinks, as the kernel would).
func MayAccess(path string, uid, gid int, want uint32) bool {
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
