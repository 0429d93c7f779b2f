package serve

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openArtifact opens the regular file rel below dir with openat2(2):
// beneath dir only (no "..", no absolute path) and through no symbolic
// link at all, the last name included, in one step of the kernel's, so a
// link swapped in after a check cannot redirect it. It returns the file
// and its size.
func openArtifact(dir, rel string) (*os.File, int64, error) {
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("execution folder: %w", err)
	}
	defer unix.Close(root)
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	var fd int
	for tries := 0; ; tries++ {
		fd, err = unix.Openat2(root, rel, &how)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) && tries < 16 {
			continue // EAGAIN: a rename raced the resolution
		}
		break
	}
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, 0, fmt.Errorf("%w: %s goes through a symbolic link", errUnsafePath, rel)
	case errors.Is(err, unix.EXDEV):
		return nil, 0, fmt.Errorf("%w: %s leaves the execution's folder", errUnsafePath, rel)
	case err != nil:
		return nil, 0, fmt.Errorf("%s: %w", rel, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, 0, fmt.Errorf("%s: %w", rel, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, 0, fmt.Errorf("%w: %s", errNotRegular, rel)
	}
	return os.NewFile(uintptr(fd), rel), st.Size, nil
}
