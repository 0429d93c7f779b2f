package outfile

import (
	"io/fs"
	"os"
)

// openResolved opens the real path one O_NOFOLLOW name at a time: macOS
// has no openat2.
func openResolved(real, name string, flag int, perm fs.FileMode) (*os.File, error) {
	return openAtEach(real, name, flag, perm)
}
