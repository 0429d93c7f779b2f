//go:build !linux

package sign

import (
	"fmt"
	"io/fs"
)

// fileKey reports false: without inode and ctime an unchanged file cannot
// be told from a changed one, so nothing is cached on this platform.
func fileKey(path string, st fs.FileInfo) (cacheKey, bool) { return cacheKey{}, false }

// checkPrivate refuses every cache file on this platform (nothing is cached).
func checkPrivate(file string, st fs.FileInfo) error {
	return fmt.Errorf("%s: digest cache not supported on this platform", file)
}
