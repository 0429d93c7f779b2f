package grants

import (
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skill-sandbox/skill-sandbox/internal/walk"
)

// UnplantSymlinks gives to the sandbox identity (uid:gid) each symlink
// that a root caller's script made in the write grants roots, and returns
// how many it gave. Through an id-mapped grant (see HandOver) a script's
// symlink belongs to root on the host, where a later grant through it
// (`out/charts -> /root/.config/autostart`) would be taken as root's own
// and followed; owned by uid 65534, it is refused, as it was when write
// grants were not mapped (see resolveUnplanted). A symlink is the
// script's when it is root's and its inode changed since the run started
// (made, or moved, by the script), less a second for the coarse clock of
// file times: one of root's a moment before is given away too, which only
// refuses grants through it. It runs when every process of the run is
// gone, and goes by descriptors (unplantIn, walk.OpenParent), as
// another run sharing the grant may still be changing it.
func UnplantSymlinks(roots []string, since time.Time, uid, gid int) int {
	if os.Geteuid() != 0 || uid == 0 {
		return 0
	}
	since = since.Add(-time.Second)
	n := 0
	for _, root := range roots {
		parent, name, err := walk.OpenParent(strings.TrimSuffix(root, "/"))
		if err != nil {
			continue
		}
		n += unplantIn(parent, name, 0, since, uid, gid)
		unix.Close(parent)
	}
	return n
}

// maxUnplantDepth bounds unplantIn's descent: one descriptor is open per
// level. A script's symlink deeper than this stays root's; a grant
// through it would name a path of more than this many folders.
const maxUnplantDepth = 2048

// unplantIn gives away the script's symlinks at name in the folder parent
// and below it (see UnplantSymlinks). It goes by descriptors only, so no
// path length limits it, and an entry it cannot read is skipped, not the
// rest of the walk: a script cannot end it early with a deep or long tree.
func unplantIn(parent int, name string, depth int, since time.Time, uid, gid int) int {
	var st unix.Stat_t
	if unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return 0
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		if st.Uid == 0 && !time.Unix(st.Ctim.Unix()).Before(since) && giveSymlink(parent, name, &st, uid, gid) == nil {
			return 1
		}
		return 0
	case unix.S_IFDIR:
	default:
		return 0
	}
	if depth >= maxUnplantDepth {
		return 0
	}
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	n := 0
	for {
		names, err := f.Readdirnames(256)
		for _, c := range names {
			n += unplantIn(fd, c, depth+1, since, uid, gid)
		}
		if err != nil { // io.EOF, or a folder removed meanwhile
			return n
		}
	}
}

// giveSymlink changes the owner of the symlink name in the folder dir,
// still the inode st describes, to uid:gid. The link itself is opened
// (O_PATH|O_NOFOLLOW) and changed through that descriptor, so an entry
// swapped in at its name meanwhile is not the one changed.
func giveSymlink(dir int, name string, st *unix.Stat_t, uid, gid int) error {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
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
