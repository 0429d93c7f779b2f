//go:build unix

package workdir

import (
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
)

// RenameSafe fails when dir or a folder above it lets a user other than
// root, uid or an owner outside the caller's user namespace rename its
// entries: owned by another user, or writable by group or others
// without the sticky bit. A folder named by its path for a run's life
// (a host work folder, a gVisor sandbox's bundle) must lie in such a
// TMPDIR: another user who could rename it away and put one of theirs
// in its place would have the watch measure theirs, or the supervisor
// write and sweep through their symbolic links.
//
// An owner outside the namespace (identity.UnmappedOwner: a container's
// image, owned by a host uid the container does not map) is the
// container's host, not a user of the container, and is let pass.
func RenameSafe(dir string, uid int) error {
	unmapped := identity.UnmappedOwner()
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		if err := syscall.Lstat(d, &st); err != nil {
			return fmt.Errorf("TMPDIR: %v", err)
		}
		owner := int(st.Uid)
		trusted := owner == 0 || owner == uid || owner == unmapped
		if !trusted || (st.Mode&0o022 != 0 && st.Mode&syscall.S_ISVTX == 0) {
			return fmt.Errorf("TMPDIR %s: another user may rename in %s (owner uid %d, mode %#o): set TMPDIR to a folder only you or root can change", dir, d, st.Uid, st.Mode&0o7777)
		}
		if d == "/" || d == "." {
			return nil
		}
	}
}
