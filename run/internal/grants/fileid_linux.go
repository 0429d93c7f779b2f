package grants

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// mountGrants: the grants are bind mounts in the run's mount namespace,
// which can also make part of a write grant read-only or hide it.
const mountGrants = true

// fileIDOf returns the device and inode numbers of info.
func fileIDOf(info fs.FileInfo) [2]uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return [2]uint64{uint64(st.Dev), uint64(st.Ino)}
	}
	return [2]uint64{}
}

// mountIDOf returns the id of the mount path (not following a final
// symlink) lies on, or 0 when statx(2) cannot tell (before Linux 5.8).
func mountIDOf(path string) uint64 {
	var stx unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &stx) != nil || stx.Mask&unix.STATX_MNT_ID == 0 {
		return 0
	}
	return stx.Mnt_id
}
