package stage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// openGrants opens, before the host's folders are masked, the grants the
// supervisor did not hand over as trees.
func openGrants(cfg *config) (map[string]int, error) {
	return openGrantsFrom(cfg, hostPaths{fd: -1})
}

// openGrantsFrom is openGrants through paths (see hostPaths).
func openGrantsFrom(cfg *config, paths hostPaths) (map[string]int, error) {
	fds := map[string]int{}
	for _, g := range cfg.Grants {
		if g.Tree != 0 {
			continue
		}
		fd, err := paths.open(g.Path, unix.O_PATH|unix.O_CLOEXEC)
		if err != nil {
			CloseGrants(fds)
			return nil, fmt.Errorf("open grant %s: %w", g.Path, err)
		}
		if err := stageconfig.SameGrant(fd, g); err != nil {
			unix.Close(fd)
			CloseGrants(fds)
			return nil, err
		}
		fds[g.Path] = fd
	}
	return fds, nil
}

// CloseGrants closes the descriptors openGrants returned.
func CloseGrants(fds map[string]int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// bindGrants mounts each grant at its own path under root (the new root
// being built, see buildRoot), parents first: the supervisor's tree when
// there is one, else a bind mount of the descriptor opened by openGrants.
// Missing mount points are created.
// Then the mount and everything below it gets nosuid, nodev and noexec,
// and read grants become read-only, recursively (mount_setattr(2)).
func bindGrants(cfg *config, root string, fds map[string]int) error {
	var errs []error
	for _, g := range cfg.Grants {
		dst := root + g.Path
		if err := mountPoint(dst, g.Tree, fds[g.Path]); err != nil {
			errs = append(errs, fmt.Errorf("grant %s: %w", g.Path, unroot(root, err)))
			continue
		}
		if g.Tree != 0 {
			err := attachTree(g.Tree, dst)
			unix.Close(g.Tree)
			if err != nil {
				errs = append(errs, fmt.Errorf("grant %s: %w", g.Path, err))
				continue
			}
		} else if err := unix.Mount(fdPath(fds[g.Path]), dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			errs = append(errs, fmt.Errorf("grant %s: bind: %w", g.Path, err))
			continue
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
		if !g.Write {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE, &attr); err != nil {
			errs = append(errs, fmt.Errorf("grant %s: mount_setattr: %w", g.Path, err))
		}
	}
	errs = append(errs, pinParents(cfg, root))
	for _, ro := range cfg.ReadOnly {
		if err := lockReadOnly(root, ro); err != nil {
			errs = append(errs, fmt.Errorf("read-only %s: %w", ro.Path, err))
		}
	}
	return errors.Join(errs...)
}

// lockReadOnly makes ro, a part of a write grant now mounted under the
// sandbox's new root, read-only: a read-only copy of its mount (open_tree)
// is attached on top of it. The path, which planGrants resolved, is opened
// once beneath root without following any symlink (openBeneath) and
// checked to be the file planGrants saw (a concurrent run writing to the same folder could
// have swapped a part of it); everything after works on descriptors, so no
// later swap can redirect the mount.
func lockReadOnly(root string, ro stageconfig.GrantMount) error {
	fd, err := openChecked(root, ro)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return attachReadOnlyCopy(fd, fd)
}

// pinParents makes every folder between a write grant and a read-only
// part or a masked entry inside it a mount point, by attaching a copy of
// its own mount onto it. rename(2) and rmdir(2) refuse to move or remove
// a mount point (EBUSY), but not a folder above one, whose mounts move
// with it: renaming .git out of the way under a write grant of a project
// took .git/hooks' read-only mount along, and the script then created a
// fresh .git/hooks/pre-commit where the host would run it. Pinned, the
// path from the grant down to each entry stays as it is. Each folder is
// opened beneath root without following a symlink (openBeneath); one
// that is gone is skipped (its entry is gone too, see maskOne).
func pinParents(cfg *config, root string) error {
	pinned := map[string]bool{}
	var errs []error
	for _, e := range append(append([]stageconfig.GrantMount(nil), cfg.ReadOnly...), cfg.Masked...) {
		grant := ""
		for _, g := range cfg.Grants {
			if g.Write && strings.HasPrefix(e.Path, g.Path+"/") && len(g.Path) > len(grant) {
				grant = g.Path
			}
		}
		if grant == "" {
			continue
		}
		var parents []string
		for dir := filepath.Dir(e.Path); dir != grant && strings.HasPrefix(dir, grant+"/"); dir = filepath.Dir(dir) {
			parents = append(parents, dir)
		}
		slices.Reverse(parents) // the outermost first
		for _, dir := range parents {
			if pinned[dir] {
				continue
			}
			pinned[dir] = true
			if err := pinFolder(root, dir); err != nil {
				errs = append(errs, fmt.Errorf("pin %s: %w", dir, err))
			}
		}
	}
	return errors.Join(errs...)
}

// pinFolder attaches a copy of the mount of dir (under root) onto dir
// itself, keeping the write grant's attributes (writable, nosuid, nodev,
// noexec) and the mounts below it.
func pinFolder(root, dir string) error {
	fd, err := openBeneath(root, dir)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
		return fmt.Errorf("%w: a folder on the path of %s is now a symlink (swapped since the check); refused", stageconfig.ErrBadConfig, dir)
	case err != nil:
		return fmt.Errorf("openat2: %w", err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("%w: %s is no longer a folder (swapped since the check); refused", stageconfig.ErrBadConfig, dir)
	}
	return attachCopy(fd, fd, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
}

// mountPoint makes sure path exists in the sandbox's view, as a folder or
// an empty file like the grant (open on fd, or the tree).
func mountPoint(path string, tree, fd int) error {
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	src := fd
	if tree != 0 {
		src = tree
	}
	var st unix.Stat_t
	if err := unix.Fstat(src, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return os.MkdirAll(path, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// attachSkill mounts the supervisor's tree of the skill folder at its
// path under root, in place of a bind mount of a descriptor the init stage
// could not open itself.
func attachSkill(cfg *config, root string) error {
	if err := os.MkdirAll(root+cfg.Skill, 0o755); err != nil {
		return fmt.Errorf("skill folder %s: %w", cfg.Skill, unroot(root, err))
	}
	err := attachTree(cfg.SkillTree, root+cfg.Skill)
	unix.Close(cfg.SkillTree)
	if err != nil {
		return fmt.Errorf("skill folder %s: %w", cfg.Skill, err)
	}
	return nil
}

// attachTree attaches tree, a copy of a host mount made by handOver, at
// path, and makes it and every mount below it private. The copy is a
// peer of the host's mount when that one is shared (systemd makes "/"
// shared), and every mount made inside it afterwards (the masks of
// maskDenied, anything mounted on a grant) would then be made in the
// host's mount namespace too, and outlive the run.
func attachTree(tree int, path string) error {
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	if err := unix.Mount("", path, "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make private: %w", err)
	}
	return nil
}

// maskDenied hides the deny-list entries found inside grants (at their
// paths under root): a folder behind an empty read-only tmpfs no one may
// enter, a file behind /dev/null on a nodev mount (opening it fails). Each
// entry is opened beneath root without following a symlink (openBeneath)
// and must still be the file the supervisor saw (maskMounts); the mask is
// mounted onto that descriptor. A path swapped meanwhile, for a symlink
// that would carry the mask elsewhere or for another file while the
// secret moves, refuses the run instead.
func maskDenied(cfg *config, root string, null int) error {
	var errs []error
	for _, m := range cfg.Masked {
		if err := maskOne(root, m, null); err != nil {
			errs = append(errs, fmt.Errorf("mask %s: %w", m.Path, err))
		}
	}
	return errors.Join(errs...)
}

// maskOne masks m under root (see maskDenied).
func maskOne(root string, m stageconfig.GrantMount, null int) error {
	fd, err := openChecked(root, m)
	if errors.Is(err, unix.ENOENT) {
		return nil // gone, or hidden by a mask above it
	} else if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		// mount(2) follows the descriptor's magic link to the very
		// folder opened, whatever its path has become.
		if err := unix.Mount("tmpfs", fdPath(fd), "tmpfs", maskFlags|unix.MS_RDONLY, "size=4k,nr_inodes=1,mode=000"); err != nil {
			return err
		}
	case unix.S_IFREG:
		if null == 0 {
			return errors.New("no /dev/null to mask it with")
		}
		return attachReadOnlyCopy(null, fd)
	}
	return nil // a symlink, socket or FIFO: no content to read
}

// grantAccess maps a grantRule's access to Landlock rights.
func grantAccess(access string) uint64 {
	switch access {
	case "rw":
		return llReadWrite
	case "r":
		return llRead
	}
	return unix.LANDLOCK_ACCESS_FS_READ_DIR
}
