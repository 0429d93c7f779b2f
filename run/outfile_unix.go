//go:build linux || darwin

package run

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// resolveOutput returns the real path of the file abs names, which need
// not exist yet, or the first symlink on the way that belongs to uid (see
// resolveUnplanted). Names that do not exist are kept as they are, below
// their existing folder's real path, for the open to create the file or
// report the missing folder; a dangling symlink is followed to the file
// it would create.
func resolveOutput(abs string, uid int) (real, link string) {
	for range 40 {
		if real, _, link := resolveUnplanted(abs, uid); real != "" || link != "" {
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
		if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
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

// openAtEach opens the absolute path real one name at a time from the
// root, each with O_NOFOLLOW, so that no symlink on the way is followed
// (ELOOP instead). name is the *os.File's name.
func openAtEach(real, name string, flag int, perm fs.FileMode) (*os.File, error) {
	dirfd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	parts := strings.Split(strings.Trim(real, "/"), "/")
	for i, part := range parts {
		if part == "" {
			continue
		}
		fl, mode := unix.O_RDONLY|unix.O_DIRECTORY, uint32(0)
		if i == len(parts)-1 {
			fl, mode = flag, uint32(perm.Perm())
		}
		fd, err := unix.Openat(dirfd, part, fl|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
		if err == unix.ENOTDIR && isLinkAt(dirfd, part) {
			err = unix.ELOOP // Linux reports O_DIRECTORY first
		}
		unix.Close(dirfd)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		dirfd = fd
	}
	return os.NewFile(uintptr(dirfd), name), nil
}

// isLinkAt tells whether name in the folder dirfd is a symlink.
func isLinkAt(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}
