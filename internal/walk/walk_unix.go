//go:build linux || darwin

package walk

import (
	"errors"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// errStop ends NoFollow when its visit function says so.
var errStop = errors.New("walk stopped")

// errTooDeep ends NoFollow at a folder more than MaxDepth levels
// below its root.
var errTooDeep = errors.New("folder too deep")

// MaxDepth is how many levels below its root NoFollow goes. It
// holds one descriptor per level open, so it bounds them: a script can
// nest folders about 2048 deep within PATH_MAX, and several watched runs
// (the supervisor walks each run's work folder every few watch ticks)
// holding that many each could exhaust the supervisor's descriptors and
// fail other runs. A deeper tree ends the walk with an error, which the
// callers treat as they treat an unreadable folder: the artifact listing
// is marked truncated, the work folder watch stops the run.
const MaxDepth = 256

// NoFollow calls visit with the path and lstat(2) data of root and of
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
// long or more (as when the walks went by paths), or one more than
// MaxDepth levels below root.
//
// root must be absolute with its symlinks resolved (the artifact roots
// and the work folder are, once, before the run; on macOS that takes
// /var to /private/var): the folders above it are opened from "/" one
// name at a time, without following a symlink either (OpenParent),
// since a script allowed to write above root (two runs sharing a write
// grant) could otherwise swap one of them for a symlink and have root's
// path lead elsewhere. Such a swap, seen as a symlink or a non-folder
// above root, is an error; a folder above root that vanished is skipped,
// as root itself is.
func NoFollow(root string, visit func(p string, st *unix.Stat_t) bool) error {
	return NoFollowAt(root, func(_ int, _, p string, st *unix.Stat_t) Step {
		if !visit(p, st) {
			return Stop
		}
		return On
	})
}

// Step is what a NoFollowAt visit function asks for next.
type Step int

// Steps of NoFollowAt.
const (
	On   Step = iota // go on, into the entry when it is a folder
	Skip             // go on, but not into this folder
	Stop             // end the walk
)

// NoFollowAt is NoFollow, with visit also given the descriptor of
// the folder holding the entry and the entry's name in it (so that it can
// act on the entry without going by its path), and able to skip a folder.
// The descriptor is valid only during the call.
func NoFollowAt(root string, visit func(parent int, name, p string, st *unix.Stat_t) Step) error {
	var walk func(parent int, name, p string, depth int) error
	walk = func(parent int, name, p string, depth int) error {
		var st unix.Stat_t
		if err := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return walkErr(p, err)
		}
		switch visit(parent, name, p, &st) {
		case Stop:
			return errStop
		case Skip:
			return nil
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return nil
		}
		if len(p) >= unix.PathMax {
			return &os.PathError{Op: "walk", Path: p, Err: unix.ENAMETOOLONG}
		}
		if depth > MaxDepth {
			return &os.PathError{Op: "walk", Path: p, Err: errTooDeep}
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
				if err := walk(fd, n, p+"/"+n, depth+1); err != nil {
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
	root = strings.TrimSuffix(root, "/")
	parent, name, err := OpenParent(root)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	err = walk(parent, name, root, 0)
	unix.Close(parent)
	if err == errStop {
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

// OpenNoFollow opens the file at the absolute path p for reading, going
// from "/" one name at a time without following a symlink anywhere on the
// path and without blocking on a FIFO (OpenParent). The artifact
// roots are free of symlinks (resolved before the run), so only a name
// the sandbox swapped for a symlink fails here.
func OpenNoFollow(p string) (*os.File, error) {
	parent, name, err := OpenParent(p)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	unix.Close(parent)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// OpenParent opens the folder holding the absolute path p and
// returns its descriptor and p's last name. It goes from "/" one name at
// a time, each opened relative to the one before with O_NOFOLLOW and
// O_DIRECTORY, so a symlink or a non-folder anywhere above p fails
// (ELOOP, ENOTDIR) instead of being followed; one descriptor is held at
// a time.
func OpenParent(p string) (int, string, error) {
	if !strings.HasPrefix(p, "/") {
		return -1, "", &os.PathError{Op: "open", Path: p, Err: unix.EINVAL}
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", &os.PathError{Op: "open", Path: "/", Err: err}
	}
	names := strings.Split(strings.Trim(p, "/"), "/")
	for _, name := range names[:len(names)-1] {
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		unix.Close(fd)
		if err != nil {
			return -1, "", &os.PathError{Op: "open", Path: p, Err: err}
		}
		fd = next
	}
	return fd, names[len(names)-1], nil
}
