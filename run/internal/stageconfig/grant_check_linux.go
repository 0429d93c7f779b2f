package stageconfig

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// SameGrant checks that fd is the file planGrants checked for g (a grant,
// or a masked entry, see maskMounts): the path may have been swapped for
// a symlink to a denied folder since (by a script of a concurrent run
// writing to a parent folder). The error wraps
// ErrBadConfig so that grants.HandOver fails rather than falls back.
func SameGrant(fd int, g GrantMount) error {
	if g.Dev == 0 && g.Ino == 0 {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("grant %s: fstat: %v", g.Path, err)
	}
	if uint64(st.Dev) != g.Dev || uint64(st.Ino) != g.Ino {
		return fmt.Errorf("%w: %s changed between its check and its mount (replaced, or swapped for a symlink); refused", ErrBadConfig, g.Path)
	}
	return nil
}
