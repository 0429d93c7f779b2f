package outfile

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openResolved opens the real path with openat2 RESOLVE_NO_SYMLINKS: a
// symlink anywhere on it fails the open with ELOOP. Kernels before 5.6
// (ENOSYS) and seccomp filters that refuse openat2 (EPERM) get the same
// walk one O_NOFOLLOW name at a time.
func openResolved(real, name string, flag int, perm fs.FileMode) (*os.File, error) {
	how := unix.OpenHow{Flags: uint64(flag | unix.O_CLOEXEC), Resolve: unix.RESOLVE_NO_SYMLINKS}
	if flag&unix.O_CREAT != 0 {
		how.Mode = uint64(perm.Perm()) // openat2 refuses a mode without O_CREAT (EINVAL)
	}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, real, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), name), nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
			return openAtEach(real, name, flag, perm)
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
}
