//go:build unix

package sign

import (
	"os"
	"syscall"
)

// openRegular opens path for reading without following a final symlink and
// without blocking if it turned into a FIFO.
func openRegular(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// openNonblock opens path for reading, following symlinks, without
// blocking if it is a FIFO.
func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
