//go:build !windows

package workdir

import (
	"os"
	"syscall"
)

// Owned reports whether path is a folder (not a symlink to one) owned
// by uid.
func Owned(path string, uid int) bool {
	st, err := os.Lstat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == uid
}
