package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// mountGrants: the grants are bind mounts in the run's mount namespace,
// which can also make part of a write grant read-only or hide it.
const mountGrants = true

// firstTreeFD is the init stage's descriptor of the first detached tree:
// the trees follow configFD, reportFD and statusFD in ExtraFiles.
const firstTreeFD = statusFD + 1

// handOver lets a sandbox that runs as another identity than the caller
// (a root caller, see nobodyUID) reach the skill folder and the grants
// without anyone changing their permissions. For each path, the
// supervisor, which can reach it, makes a detached copy of its mount
// (open_tree(2) with OPEN_TREE_CLONE); the init stage attaches each copy
// at its own path in the sandbox's mount namespace (move_mount(2)): the
// folders above it, such as a 0700 `mktemp -d` folder or /root, are then
// never traversed. Read-only copies (the skill folder, read grants) are
// also id-mapped so that files owned by root appear owned by the sandbox
// identity (mount_setattr(2) with MOUNT_ATTR_IDMAP). Write grants are
// not (see clone): a write grant must itself be writable by the sandbox
// identity, and Run creates missing ones owned by it.
//
// The skill folder is handed over only with skillToo (when the sandbox
// identity cannot reach it otherwise). It returns the files to pass to
// the init stage (their descriptors are recorded in cfg), or nil when the
// caller is the sandbox identity or cannot clone mounts. When a read-only
// copy cannot be id-mapped, the path itself must be accessible to the
// sandbox identity; the error then names it.
func handOver(uid, gid int, cfg *initConfig, skillToo bool) ([]*os.File, error) {
	if uid == os.Geteuid() || os.Geteuid() != 0 || (!skillToo && len(cfg.Grants) == 0) {
		return nil, nil
	}
	userns, err := idmapUserNS(uid, gid)
	if err != nil {
		userns = -1
	} else {
		defer unix.Close(userns)
	}
	var files []*os.File
	// fail undoes what was handed over. Without open_tree (old kernel, no
	// CAP_SYS_ADMIN in the initial user namespace, a seccomp policy)
	// nothing is handed over, and checkReachable and checkGrantReach
	// decide; a grant that fails its checks (ErrBadConfig) refuses the run.
	fail := func(err error) ([]*os.File, error) {
		for _, f := range files {
			f.Close()
		}
		cfg.SkillTree = 0
		for j := range cfg.Grants {
			cfg.Grants[j].Tree = 0
		}
		if errors.Is(err, ErrBadConfig) {
			return nil, err
		}
		return nil, nil
	}
	clone := func(path, want string, g *grantMount) (int, error) {
		fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return 0, err
		}
		if g != nil {
			if err := sameGrant(fd, *g); err != nil {
				unix.Close(fd)
				return 0, err
			}
		}
		mapped := false
		// Never for a write grant: a file the script created there would
		// belong to root on disk, and a setuid bit it set would make a
		// setuid-root program on the host.
		if userns >= 0 && want == "r" {
			attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(userns)}
			mapped = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr) == nil
		}
		if !mapped && !grantAccessible(path, uid, gid, want) {
			unix.Close(fd)
			return 0, errGrantAccess(path, uid, want)
		}
		files = append(files, os.NewFile(uintptr(fd), path))
		return firstTreeFD + len(files) - 1, nil
	}
	if skillToo {
		if cfg.SkillTree, err = clone(cfg.Skill, "r", nil); err != nil {
			return fail(err)
		}
	}
	for i := range cfg.Grants {
		g := &cfg.Grants[i]
		want := "r"
		if g.Write {
			want = "rw"
		}
		if g.Tree, err = clone(g.Path, want, g); err != nil {
			return fail(err)
		}
	}
	return files, nil
}

// idmapUserNS returns a user namespace whose uid and gid 0 map to uid and
// gid, the mapping of the sandbox's own namespace, for id-mapped mounts.
// It is the namespace of a short-lived init stage that is given no config
// and exits as soon as the namespace is open.
func idmapUserNS(uid, gid int) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return -1, err
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return -1, err
	}
	defer null.Close()
	cmd := &exec.Cmd{
		Path:       selfExe(),
		Args:       []string{initArg0},
		Env:        []string{"GOGC=off", "GOMAXPROCS=1"},
		ExtraFiles: []*os.File{r, null},
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:  unix.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
			Pdeathsig:   syscall.SIGKILL,
		},
	}
	if err := cmd.Start(); err != nil {
		return -1, err
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	w.Close() // the helper reads EOF and exits
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil {
		return -1, err
	}
	return fd, nil
}

// grantAccessible reports whether uid:gid may use path itself as want
// ("r" or "rw"; folders also need search permission).
func grantAccessible(path string, uid, gid int, want string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	bits := uint32(permRead)
	if want == "rw" {
		bits |= 2
	}
	if st.IsDir() {
		bits |= permExec
	}
	return mayAccess(path, uid, gid, bits)
}

// errGrantAccess names the path the sandbox identity cannot use, and the
// fix.
func errGrantAccess(path string, uid int, want string) error {
	how, chmod := "readable", "o+rX"
	if want == "rw" {
		how, chmod = "writable", "o+rwX"
	}
	why := ", and its file system cannot be id-mapped"
	if want == "rw" {
		why = ""
	}
	return fmt.Errorf("%w: %s is not %s by uid %d, the identity the sandbox runs as%s (fix: chown %d %s, or chmod %s %s, or let skill-sandbox create the --write folder, or run skill-sandbox as its owner rather than root)", ErrBadConfig, path, how, uid, why, uid, path, chmod, path)
}

// checkGrantReach is the permission check without a mount namespace,
// where the script reaches each grant through the host's folders as the
// sandbox identity.
func checkGrantReach(uid, gid int, reach map[string]string) error {
	if uid == os.Geteuid() {
		return nil
	}
	for path, want := range reach {
		if bad := unreachable(path, uid, gid, permExec); bad != "" && bad != path {
			return errUnreachable(bad, uid)
		}
		if !grantAccessible(path, uid, gid, want) {
			return errGrantAccess(path, uid, want)
		}
	}
	return nil
}

// openGrants opens, before the host's folders are masked, the grants the
// supervisor did not hand over as trees.
func openGrants(cfg *initConfig) (map[string]int, error) {
	fds := map[string]int{}
	for _, g := range cfg.Grants {
		if g.Tree != 0 {
			continue
		}
		fd, err := unix.Open(g.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			closeGrants(fds)
			return nil, fmt.Errorf("open grant %s: %v", g.Path, err)
		}
		if err := sameGrant(fd, g); err != nil {
			unix.Close(fd)
			closeGrants(fds)
			return nil, err
		}
		fds[g.Path] = fd
	}
	return fds, nil
}

// sameGrant checks that fd is the file planGrants checked for g (a grant,
// or a masked entry, see maskMounts): the path may have been swapped for
// a symlink to a denied folder since (by a script of a concurrent run
// writing to a parent folder). The error wraps
// ErrBadConfig so that handOver fails rather than falls back.
func sameGrant(fd int, g grantMount) error {
	if g.Dev == 0 && g.Ino == 0 {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("grant %s: fstat: %v", g.Path, err)
	}
	if uint64(st.Dev) != g.Dev || uint64(st.Ino) != g.Ino {
		return fmt.Errorf("%w: %s changed between its check and its mount (replaced, or swapped for a symlink); refused", ErrBadConfig, g.Path)
	}
	return nil
}

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

func closeGrants(fds map[string]int) {
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
func bindGrants(cfg *initConfig, root string, fds map[string]int) error {
	var errs []error
	for _, g := range cfg.Grants {
		dst := root + g.Path
		if err := mountPoint(dst, g.Tree, fds[g.Path]); err != nil {
			errs = append(errs, fmt.Errorf("grant %s: %v", g.Path, err))
			continue
		}
		if g.Tree != 0 {
			err := attachTree(g.Tree, dst)
			unix.Close(g.Tree)
			if err != nil {
				errs = append(errs, fmt.Errorf("grant %s: %v", g.Path, err))
				continue
			}
		} else if err := unix.Mount(fdPath(fds[g.Path]), dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			errs = append(errs, fmt.Errorf("grant %s: bind: %v", g.Path, err))
			continue
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
		if !g.Write {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		}
		if err := unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE, &attr); err != nil {
			errs = append(errs, fmt.Errorf("grant %s: mount_setattr: %v", g.Path, err))
		}
	}
	for _, ro := range cfg.ReadOnly {
		if err := lockReadOnly(root, ro); err != nil {
			errs = append(errs, fmt.Errorf("read-only %s: %v", ro.Path, err))
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
func lockReadOnly(root string, ro grantMount) error {
	fd, err := openChecked(root, ro)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return attachReadOnlyCopy(fd, fd)
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
func attachSkill(cfg *initConfig, root string) error {
	if err := os.MkdirAll(root+cfg.Skill, 0o755); err != nil {
		return fmt.Errorf("skill folder %s: %v", cfg.Skill, err)
	}
	err := attachTree(cfg.SkillTree, root+cfg.Skill)
	unix.Close(cfg.SkillTree)
	if err != nil {
		return fmt.Errorf("skill folder %s: %v", cfg.Skill, err)
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
		return fmt.Errorf("move_mount: %v", err)
	}
	if err := unix.Mount("", path, "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make private: %v", err)
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
func maskDenied(cfg *initConfig, root string, null int) error {
	var errs []error
	for _, m := range cfg.Masked {
		if err := maskOne(root, m, null); err != nil {
			errs = append(errs, fmt.Errorf("mask %s: %w", m.Path, err))
		}
	}
	return errors.Join(errs...)
}

// maskOne masks m under root (see maskDenied).
func maskOne(root string, m grantMount, null int) error {
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
