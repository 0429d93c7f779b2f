//go:build !windows

package run

import (
	"os"
	"syscall"
)

// ownFolder reports whether path is a folder (not a symlink to one) owned
// by uid.
func ownFolder(path string, uid int) bool {
	st, err := os.Lstat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return ok && int(sys.Uid) == uid
}
