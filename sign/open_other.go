//go:build !unix

package sign

import "os"

// openRegular opens path for reading. Platforms without O_NOFOLLOW rely on
// the type check that follows the open.
func openRegular(path string) (*os.File, error) {
	return os.Open(path)
}

// openNonblock opens path for reading.
func openNonblock(path string) (*os.File, error) {
	return os.Open(path)
}
