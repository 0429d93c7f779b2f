package run

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// unplantSymlinks gives to the sandbox identity (uid:gid) each symlink
// that a root caller's script made in the write grants roots, and returns
// how many it gave. Through an id-mapped grant (see handOver) a script's
// symlink belongs to root on the host, where a later grant through it
// (`out/charts -> /root/.config/autostart`) would be taken as root's own
// and followed; owned by uid 65534, it is refused, as it was when write
// grants were not mapped (see resolveUnplanted). A symlink is the
// script's when it is root's and its inode changed since the run started
// (made, or moved, by the script), less a second for the coarse clock of
// file times: one of root's a moment before is given away too, which only
// refuses grants through it. It runs when every process of the run is
// gone, and goes by descriptors (walkNoFollow, openParentNoFollow), as
// another run sharing the grant may still be changing it.
func unplantSymlinks(roots []string, since time.Time, uid, gid int) int {
	if os.Geteuid() != 0 || uid == 0 {
		return 0
	}
	since = since.Add(-time.Second)
	n := 0
	for _, root := range roots {
		walkNoFollow(root, func(p string, st *unix.Stat_t) bool {
			if st.Mode&unix.S_IFMT != unix.S_IFLNK || st.Uid != 0 || time.Unix(st.Ctim.Unix()).Before(since) {
				return true
			}
			if giveSymlink(p, st, uid, gid) == nil {
				n++
			}
			return true
		})
	}
	return n
}

// giveSymlink changes the owner of the symlink p, still the inode st
// describes, to uid:gid. The link itself is opened (O_PATH|O_NOFOLLOW)
// and changed through that descriptor, so an entry swapped in at its
// name meanwhile is not the one changed.
func giveSymlink(p string, st *unix.Stat_t, uid, gid int) error {
	dir, name, err := openParentNoFollow(p)
	if err != nil {
		return err
	}
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	unix.Close(dir)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return err
	}
	if now.Ino != st.Ino || now.Dev != st.Dev || now.Mode&unix.S_IFMT != unix.S_IFLNK {
		return unix.ESTALE
	}
	return unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
}
