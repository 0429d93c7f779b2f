//go:build linux || darwin

package serve

import "golang.org/x/sys/unix"

// freeBytes returns the bytes an unprivileged process may still write in
// dir's file system; false when that cannot be known.
func freeBytes(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	free := uint64(st.Bavail) * uint64(st.Bsize)
	return int64(min(free, 1<<62)), true
}
