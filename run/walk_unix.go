//go:build linux || darwin

package run

import (
	"errors"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// errStopWalk ends walkNoFollow when its visit function says so.
var errStopWalk = errors.New("walk stopped")

// walkNoFollow calls visit with the path and lstat(2) data of root and of
// every entry under it, until visit returns false. The supervisor walks
// folders the sandbox writes (the work folder, write grants) while a
// script may still change them (its own run, or another run sharing a
// write grant), so the walk goes by descriptors: each entry is looked at
// and opened relative to its folder's descriptor, without following a
// symlink and opening nothing but a folder (O_NOFOLLOW, O_DIRECTORY). By
// path, a folder swapped for a symlink (renameat2 RENAME_EXCHANGE) between
// the look and the open led the walk out into the host's tree (a root-only
// folder's names and sizes among another run's artifacts), or into a FIFO
// whose open blocked the walk for good. An entry that vanishes or changes
// type as we look (ENOENT, ENOTDIR, ELOOP) is skipped; any other error
// ends the walk and is returned, as is a folder whose path is PATH_MAX
// long or more: as when the walks went by paths, which bounds the paths
// walked and the folders held open at once (one per level).
func walkNoFollow(root string, visit func(p string, st *unix.Stat_t) bool) error {
	var walk func(parent int, name, p string) error
	walk = func(parent int, name, p string) error {
		var st unix.Stat_t
		if err := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return walkErr(p, err)
		}
		if !visit(p, &st) {
			return errStopWalk
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return nil
		}
		if len(p) >= unix.PathMax {
			return &os.PathError{Op: "walk", Path: p, Err: unix.ENAMETOOLONG}
		}
		fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return walkErr(p, err)
		}
		f := os.NewFile(uintptr(fd), p)
		defer f.Close()
		for {
			names, err := f.Readdirnames(256)
			for _, n := range names {
				if err := walk(fd, n, p+"/"+n); err != nil {
					return err
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				// ENOENT: the folder was removed while we read it.
				return walkErr(p, err)
			}
		}
	}
	err := walk(unix.AT_FDCWD, root, strings.TrimSuffix(root, "/"))
	if err == errStopWalk {
		return nil
	}
	return err
}

// walkErr is nil for an entry that vanished or changed type while the
// walk looked at it, else err with its path.
func walkErr(p string, err error) error {
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		return nil
	}
	return &os.PathError{Op: "walk", Path: p, Err: err}
}

// openNoFollow opens the file at the absolute path p for reading, going
// from "/" one name at a time without following a symlink anywhere on the
// path and without blocking on a FIFO. The artifact roots are free of
// symlinks (resolved before the run), so only a name the sandbox swapped
// for a symlink fails here.
func openNoFollow(p string) (*os.File, error) {
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	names := strings.Split(strings.Trim(p, "/"), "/")
	for i, name := range names {
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
		if i < len(names)-1 {
			flags |= unix.O_DIRECTORY
		}
		next, err := unix.Openat(fd, name, flags, 0)
		unix.Close(fd)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: p, Err: err}
		}
		fd = next
	}
	return os.NewFile(uintptr(fd), p), nil
}
