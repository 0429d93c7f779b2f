//go:build linux || darwin

package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/internal/walk"
)

// resolveOutput returns the real path of the file abs names, which need
// not exist yet, or the first symlink on the way that belongs to uid (see
// walk.ResolveUnplanted). Names that do not exist are kept as they are, below
// their existing folder's real path, for the open to create the file or
// report the missing folder; a dangling symlink is followed to the file
// it would create.
func resolveOutput(abs string, uid int) (real, link string) {
	for range 40 {
		if real, _, link := walk.ResolveUnplanted(abs, planted(uid)); real != "" || link != "" {
			return real, link
		}
		if filepath.Dir(abs) == abs {
			return abs, ""
		}
		dir, link := resolveOutput(filepath.Dir(abs), uid)
		if link != "" {
			return "", link
		}
		next := filepath.Join(dir, filepath.Base(abs))
		info, err := os.Lstat(next)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			return next, ""
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && identity.SandboxOwner(st.Uid, uid) {
			return "", next
		}
		target, err := os.Readlink(next)
		if err != nil {
			return next, ""
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		abs = target
	}
	return abs, "" // too many links: the open fails with ELOOP
}

// planted reports the owners whose symlinks are refused: the sandbox
// identity uid's and the runs' own ids (identity.SandboxOwner).
func planted(uid int) func(owner uint32) bool {
	return func(owner uint32) bool { return identity.SandboxOwner(owner, uid) }
}

// openAtEach opens the absolute path real one name at a time from the
// root, each with O_NOFOLLOW (walk.OpenParent), so that no symlink on
// the way is followed: a symlink as the last name fails with ELOOP, one
// above it with ELOOP or ENOTDIR (Linux checks O_DIRECTORY first). name
// is the *os.File's name.
func openAtEach(real, name string, flag int, perm fs.FileMode) (*os.File, error) {
	parent, last, err := walk.OpenParent(real)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.Unwrap(err)}
	}
	fd, err := unix.Openat(parent, last, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	unix.Close(parent)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}
