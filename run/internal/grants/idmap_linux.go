package grants

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"

	"golang.org/x/sys/unix"
)

// CanMapWrite reports whether a write grant made in the folder parent
// would be handed over id-mapped (see HandOver), so that a run can make it
// the caller's own: the kernel and parent's file system support id-mapped
// mounts and a user namespace can be had. Otherwise the folder is given
// to the sandbox identity, as it was before. It is a guess taken once
// before the folder is made; a wrong one costs a refused run, never
// access: HandOver checks again.
func CanMapWrite(parent string, uid, gid int) bool {
	userns, err := initproc.UserNS(uid, gid)
	if err != nil {
		return false
	}
	defer unix.Close(userns)
	fd, err := unix.OpenTree(unix.AT_FDCWD, parent, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(userns)}
	return unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr) == nil
}
