package gvisor

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// privateTempDir makes a folder of the supervisor's (0700) in TMPDIR for
// a sandbox's bundle and runsc's state, once TMPDIR and each folder
// above it is one no other user can rename in (renameSafe). The bundle
// is named by its path all along (runsc's --root, the /etc files a
// pooled run writes, the folder the watch walks): another user who
// could rename it away and put a folder of theirs in its place would
// have the watch measure theirs, or root write through their symbolic
// links.
func privateTempDir(prefix string) (string, error) {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return "", err
	}
	if err := renameSafe(tmp, os.Geteuid()); err != nil {
		return "", err
	}
	return os.MkdirTemp(tmp, prefix)
}

// renameSafe fails when dir or a folder above it lets a user other than
// root and uid rename its entries: owned by another user, or writable
// by group or others without the sticky bit.
func renameSafe(dir string, uid int) error {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		if err := syscall.Lstat(d, &st); err != nil {
			return fmt.Errorf("TMPDIR: %v", err)
		}
		if (st.Uid != 0 && int(st.Uid) != uid) || (st.Mode&0o022 != 0 && st.Mode&syscall.S_ISVTX == 0) {
			return fmt.Errorf("TMPDIR %s: another user may rename in %s (owner uid %d, mode %#o): set TMPDIR to a folder only you or root can change", dir, d, st.Uid, st.Mode&0o7777)
		}
		if d == "/" {
			return nil
		}
	}
}
