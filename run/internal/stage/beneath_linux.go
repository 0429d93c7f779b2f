package stage

import (
	"errors"
	"fmt"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// openBeneath opens path (absolute, as seen from root) below root with
// openat2(2), following no symlink on the way and none at the end (a
// final symlink is opened itself, O_PATH|O_NOFOLLOW). A path checked
// earlier by name can have been swapped since by anyone who may write to
// one of its folders (a concurrent run with a write grant there, the
// user): what this opens is then either the file that was checked, which
// the caller compares by device and inode, or an error, never the target
// of a symlink put in its place. Mounting onto the descriptor (fdPath, or
// move_mount(2)) then leaves no second lookup to redirect.
func openBeneath(root, path string) (int, error) {
	dir, err := unix.Open(root+"/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dir)
	return unix.Openat2(dir, strings.TrimPrefix(path, "/"), &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// openChecked opens g.Path beneath root (openBeneath) and checks that it
// is the file the supervisor saw (sameGrant). A symlink met on the way or
// another file there is a swap since the check: the error then wraps
// ErrBadConfig, which refuses the run (see runSteps). Other errors, such
// as ENOENT, are returned as they are.
func openChecked(root string, g stageconfig.GrantMount) (int, error) {
	fd, err := openBeneath(root, g.Path)
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return -1, fmt.Errorf("%w: a folder on the path of %s is now a symlink (swapped since the check); refused", stageconfig.ErrBadConfig, g.Path)
	case err != nil:
		return -1, fmt.Errorf("openat2 %s: %w", g.Path, err)
	}
	if err := stageconfig.SameGrant(fd, g); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// attachReadOnlyCopy attaches a read-only, nosuid, nodev and noexec copy
// of the mount of src onto the file or folder open on target (see
// attachCopy).
func attachReadOnlyCopy(src, target int) error {
	return attachCopy(src, target, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
}

// attachCopy attaches a copy of the mount of src (open_tree(2) with
// OPEN_TREE_CLONE, recursively) onto the file or folder open on target,
// with the mount attributes set (every mount of the copy). The attributes
// are set on the detached copy before it is attached, and both ends are
// descriptors: no path is looked up again.
func attachCopy(src, target int, set uint64) error {
	tree, err := unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(tree)
	attr := unix.MountAttr{Attr_set: set}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	if err := unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}
