package sign

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// fileKey identifies the state of the file at path described by st.
func fileKey(path string, st fs.FileInfo) (cacheKey, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return cacheKey{}, false
	}
	return cacheKey{
		path:  path,
		dev:   uint64(s.Dev),
		ino:   s.Ino,
		size:  s.Size,
		mtime: s.Mtim.Nano(),
		ctime: s.Ctim.Nano(),
	}, true
}

// checkPrivate refuses a cache file someone other than the caller owns or
// could write.
func checkPrivate(file string, st fs.FileInfo) error {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok || int(s.Uid) != os.Geteuid() || st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s: digest cache not owned by this user or writable by others; ignored", file)
	}
	return nil
}
