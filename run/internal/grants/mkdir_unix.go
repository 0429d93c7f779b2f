//go:build linux || darwin

package grants

import (
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Mkdirs creates the folders of missing (parents first, the first one's
// parent existing) and gives the last one, when it made it, to uid and
// gid (uid < 0: left as it is). It goes by descriptors: each folder is
// made with mkdirat(2) in its parent's descriptor and opened without
// following a symlink (O_NOFOLLOW), and the chown is an fchown(2) on the
// last one's own descriptor. By paths, a script with a write grant above
// the new folder (a concurrent run) could swap it for a symlink between
// the mkdir and the chown, and root gave the link's target, any host
// file, to the sandbox identity; or swap a parent, and root made the
// folders elsewhere. A folder that exists already (a concurrent caller
// made it first) is used, unless it is not a folder: a symlink there
// fails (ELOOP). It returns the folders it created, also on error.
func Mkdirs(missing []string, uid, gid int) ([]string, error) {
	if len(missing) == 0 {
		return nil, nil
	}
	parent := filepath.Dir(missing[0])
	fd, err := unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: parent, Err: err}
	}
	var made []string
	for _, d := range missing {
		name := filepath.Base(d)
		switch err := unix.Mkdirat(fd, name, 0o755); err {
		case nil:
			made = append(made, d)
		case unix.EEXIST:
		default:
			unix.Close(fd)
			return made, &fs.PathError{Op: "mkdir", Path: d, Err: err}
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return made, &fs.PathError{Op: "open", Path: d, Err: err}
		}
		fd = next
	}
	defer unix.Close(fd)
	last := missing[len(missing)-1]
	if uid >= 0 && len(made) > 0 && made[len(made)-1] == last {
		if err := unix.Fchown(fd, uid, gid); err != nil {
			return made, &fs.PathError{Op: "chown", Path: last, Err: err}
		}
	}
	return made, nil
}
