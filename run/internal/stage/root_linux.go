package stage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// rootOptions are those of the sandbox's root tmpfs. It holds only the
// folders, symlinks and empty files that serve as mount points, so a few
// pages and inodes are plenty; it is read-only once built.
const rootOptions = "size=1m,nr_inodes=4096,mode=0755"

// hostEntry is a host path shown in the sandbox at the same path: a folder
// or file by an O_PATH descriptor opened on the host's tree (bind-mounted
// in), or a symlink by its target (re-created).
type hostEntry struct {
	path   string
	link   string // symlink target, or ""
	fd     int    // O_PATH descriptor, when link is ""
	folder bool
}

// openHostEntry opens path, not following a final symlink. ok is false
// when path is missing or neither a folder, a regular file nor a symlink.
// Raw system calls, two per entry: this runs for each /etc entry on every
// start.
func openHostEntry(path string) (hostEntry, bool) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return hostEntry{}, false
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR, unix.S_IFREG:
			return hostEntry{path: path, fd: fd, folder: st.Mode&unix.S_IFMT == unix.S_IFDIR}, true
		case unix.S_IFLNK:
			var buf [unix.PathMax]byte
			n, err := unix.Readlinkat(fd, "", buf[:])
			unix.Close(fd)
			return hostEntry{path: path, link: string(buf[:n])}, err == nil && n < len(buf)
		}
	}
	unix.Close(fd)
	return hostEntry{}, false
}

// hostView holds descriptors on everything the sandbox shows of the
// host, opened on the host's tree before anything is mounted: the new
// root is then built from them, whatever the mounts hide meanwhile.
type hostView struct {
	system  []hostEntry    // llSystemDirs present on the host
	etc     []hostEntry    // etcEntries
	devices map[string]int // llDevices present on the host
	skill   int            // the skill folder, unless handed over as a tree
	work    int            // the work folder, when it is kept (no tmpfs)
	grants  map[string]int // grants not handed over as trees (openGrants)
}

// openHostView opens what buildRoot and setupMounts bind in. The list of
// system folders is fixed (llSystemDirs, the Landlock list too): the cost
// does not depend on what else lies in the host's "/".
func openHostView(cfg *config) (*hostView, error) {
	h := &hostView{devices: map[string]int{}}
	for _, p := range llSystemDirs() {
		if e, ok := openHostEntry(p); ok {
			h.system = append(h.system, e)
		}
	}
	h.etc = etcEntries(cfg.AllowNetwork)
	for _, dev := range llDevices() {
		if fd, err := unix.Open(dev, unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
			h.devices[dev] = fd
		}
	}
	open := func(dir string) (int, error) {
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, fmt.Errorf("open %s: %w", dir, err)
		}
		return fd, nil
	}
	var err error
	if cfg.SkillTree == 0 {
		if h.skill, err = open(cfg.Skill); err != nil {
			h.close()
			return nil, err
		}
	}
	if cfg.WorkDirMB == 0 {
		if h.work, err = open(cfg.WorkDir); err != nil {
			h.close()
			return nil, err
		}
	}
	if h.grants, err = openGrants(cfg); err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

// close closes every descriptor of h.
func (h *hostView) close() {
	for _, e := range append(h.system, h.etc...) {
		if e.link == "" {
			unix.Close(e.fd)
		}
	}
	for _, fd := range h.devices {
		unix.Close(fd)
	}
	for _, fd := range []int{h.skill, h.work} {
		if fd != 0 {
			unix.Close(fd)
		}
	}
	CloseGrants(h.grants)
}

// rootBase is the host folder the new root's tmpfs is first mounted on.
// It must exist; pivot_root moves the tmpfs away from it, and anything it
// hides meanwhile was opened before (openHostView).
func rootBase(cfg *config) string {
	if st, err := os.Lstat("/tmp"); err == nil && st.IsDir() {
		return "/tmp"
	}
	return cfg.WorkDir
}

// buildRoot fills the sandbox's root, a fresh tmpfs mounted on root, as
// bubblewrap does, while the host's tree is still the root:
//
//   - the system folders of llSystemDirs, bound in (recursively) or
//     re-created as the host's symlinks (/bin -> usr/bin);
//   - /etc, a folder holding only the entries of etcPatterns and the
//     files of etcOwn;
//   - /dev, a folder holding the devices of llDevices (bound in), the
//     /dev/fd and /dev/std* links and the pts and shm folders;
//   - the mount points of the skill folder, the work folder and the
//     grants that cannot be created later: those outside /tmp (a tmpfs
//     of its own, mounted later) and outside the system folders (which
//     hold them already), such as /home/x/data for a grant;
//   - then all of it read-only and nosuid, recursively, in one call: the
//     script can create nothing in "/";
//   - last, /proc: a fresh proc with a PID namespace (which needs the
//     host's proc to be visible, hence before pivot_root), else the
//     host's, bound in; it stays writable (/proc/self/oom_score_adj).
//
// Every other folder and file of the host's "/" is simply absent, and the
// cost does not depend on how many there are.
func buildRoot(cfg *config, h *hostView, root string) error {
	var errs []error
	fail := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, d := range []string{"/tmp", "/proc", "/dev", "/dev/pts", "/dev/shm", "/etc"} {
		fail(os.Mkdir(root+d, 0o755))
	}
	var bound []string // bind mounts, made read-only below
	place := func(e hostEntry, rec bool) {
		dst := root + e.path
		if e.link != "" {
			fail(os.Symlink(e.link, dst))
			return
		}
		if err := placeholder(dst, e.folder); err != nil {
			fail(err)
			return
		}
		flags := uintptr(unix.MS_BIND)
		if rec {
			flags |= unix.MS_REC
		}
		if err := unix.Mount(fdPath(e.fd), dst, "", flags, ""); err != nil {
			fail(fmt.Errorf("bind %s: %w", e.path, err))
			return
		}
		bound = append(bound, dst)
	}
	for _, e := range h.system {
		place(e, true)
	}
	// Before the /etc entries: MkdirAll must not meet a symlink that
	// resolves against the host's root, as an absolute one would here.
	for _, mt := range outsideMountPoints(cfg, h) {
		fail(mkMountPoint(root+mt.path, mt.folder))
	}
	for _, e := range h.etc {
		fail(os.MkdirAll(filepath.Dir(root+e.path), 0o755))
		place(e, true)
	}
	for path, content := range etcOwn(cfg.AllowNetwork) {
		fail(os.WriteFile(root+path, []byte(content), 0o644))
	}
	for _, dev := range llDevices() {
		if fd, ok := h.devices[dev]; ok {
			place(hostEntry{path: dev, fd: fd}, false)
		}
	}
	for link, target := range map[string]string{
		"/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0",
		"/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2",
	} {
		fail(os.Symlink(target, root+link))
	}
	fail(readOnlyTree(root, bound))
	if stageconfig.Has(cfg.Namespaces, stageconfig.LayerPIDNS) {
		if err := unix.Mount("proc", root+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			fail(fmt.Errorf("mount /proc: %w", err))
		}
	} else if err := unix.Mount("/proc", root+"/proc", "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		fail(fmt.Errorf("bind /proc: %w", err))
	}
	return errors.Join(errs...)
}

// readOnlyTree makes the mount on base and every mount below it read-only
// and nosuid with one mount_setattr(2). Where that fails (before Linux
// 5.12, or a container's seccomp policy that does not know the call),
// base and each of bound (the bind mounts below it) are remounted one by
// one. Device nodes stay usable: a read-only mount refuses writes to
// regular files, folders and symlinks, not to character devices.
func readOnlyTree(base string, bound []string) error {
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	if unix.MountSetattr(unix.AT_FDCWD, base, unix.AT_RECURSIVE, &attr) == nil {
		return nil
	}
	var errs []error
	for _, p := range append([]string{base}, bound...) {
		if err := remountReadOnly(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// oldRoot is where pivot_root puts the host's tree, in the private /tmp
// (the new root is read-only by then), until enterRoot detaches it.
const oldRoot = "/tmp/.host-root"

// enterRoot makes root (see setupMounts) the root with pivot_root(2) and
// detaches the host's tree: nothing of the host stays reachable but what
// was bound in, and /proc/self/mountinfo lists only the sandbox's mounts.
func enterRoot(root string) error {
	if err := os.Mkdir(root+oldRoot, 0o700); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.PivotRoot(root, root+oldRoot); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir /: %w", err)
	}
	if err := unix.Unmount(oldRoot, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's root: %w", err)
	}
	if err := os.Remove(oldRoot); err != nil {
		return fmt.Errorf("remove %s: %w", oldRoot, err)
	}
	return nil
}

// mountTarget is a path to create in the root tmpfs.
type mountTarget struct {
	path   string
	folder bool
}

// outsideMountPoints lists the mount points buildRoot must create: the
// skill folder, the work folder (unless it is a folder of the private
// /tmp) and the grants, except those in /tmp or /proc (mounted over
// later) and in the system folders (bound in whole).
func outsideMountPoints(cfg *config, h *hostView) []mountTarget {
	skip := []string{"/tmp", "/proc"}
	for _, e := range h.system {
		skip = append(skip, e.path)
	}
	mps := []mountTarget{{cfg.Skill, true}, {cfg.WorkDir, true}}
	for _, g := range cfg.Grants {
		fd := h.grants[g.Path]
		if g.Tree != 0 {
			fd = g.Tree
		}
		var st unix.Stat_t
		folder := unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFDIR
		mps = append(mps, mountTarget{g.Path, folder})
	}
	var out []mountTarget
	for _, mp := range mps {
		if !Under(mp.path, skip) && mp.path != "/" {
			out = append(out, mp)
		}
	}
	return out
}

// mkMountPoint creates path (and its parents) as a folder or an empty
// file; an existing one is fine.
func mkMountPoint(path string, folder bool) error {
	if folder {
		return os.MkdirAll(path, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return placeholder(path, false)
}

// placeholder creates path as an empty folder or file to mount on.
func placeholder(path string, folder bool) error {
	if folder {
		if err := os.Mkdir(path, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// fdPath names the file open on fd for mount(2).
func fdPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }
