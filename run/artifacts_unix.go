//go:build linux || darwin

package run

import (
	"io/fs"
	"syscall"
)

// hashOpenFlags keep hashFile from following a symlink or blocking on a
// FIFO that replaced a file.
const hashOpenFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// inodeOf returns the inode number of info.
func inodeOf(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
