//go:build linux || darwin

package plan

import (
	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"

	"golang.org/x/sys/unix"
)

// SandboxIdentity returns the host uid and gid a root caller's scripts
// run as, the caller's own otherwise (identity.Sandbox).
func SandboxIdentity() (int, int) { return identity.Sandbox() }

// checkReachable is identity.FirstUnreachable as an error
// (grants.UnreachableError).
func checkReachable(uid, gid int, skill, script, program string) error {
	if bad := identity.FirstUnreachable(uid, gid, skill, script, program); bad != "" {
		return &grants.UnreachableError{Path: bad, UID: uid}
	}
	return nil
}

// writableFolder returns the error mkdir(2) would meet creating a folder
// in dir as the caller, or nil: the kernel answers (faccessat(2) with
// AT_EACCESS), so groups, ACLs and a read-only file system count. It
// stays in run since it asks about the caller, not the run's identity,
// and its Windows twin is run's.
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
