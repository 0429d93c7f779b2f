package stage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	h := openSystemView(cfg.AllowNetwork)
	if err := h.openRunView(cfg, hostPaths{fd: -1}); err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

// openSystemView opens the part of the host view that no run changes: the
// system folders, the /etc entries and the devices.
func openSystemView(allowNetwork bool) *hostView {
	h := &hostView{devices: map[string]int{}}
	for _, p := range llSystemDirs() {
		if e, ok := openHostEntry(p); ok {
			h.system = append(h.system, e)
		}
	}
	h.etc = etcEntries(allowNetwork)
	for _, dev := range llDevices() {
		if fd, err := unix.Open(dev, unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
			h.devices[dev] = fd
		}
	}
	return h
}

// openRunView opens the part of the host view that is the run's: the
// skill folder (unless handed over as a tree), the kept work folder and
// the grants, through paths (see hostPaths). On an error nothing of the
// run's part stays open.
func (h *hostView) openRunView(cfg *config, paths hostPaths) error {
	open := func(dir string) (int, error) {
		fd, err := paths.open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC)
		if err != nil {
			return 0, fmt.Errorf("open %s: %w", dir, err)
		}
		return fd, nil
	}
	var err error
	if cfg.SkillTree == 0 {
		if h.skill, err = open(cfg.Skill); err != nil {
			return err
		}
	}
	if cfg.WorkDirMB == 0 {
		if h.work, err = open(cfg.WorkDir); err != nil {
			h.closeRunView()
			return err
		}
	}
	if h.grants, err = openGrantsFrom(cfg, paths); err != nil {
		h.closeRunView()
		return err
	}
	return nil
}

// hostPaths opens host paths by name. A pooled stage builds its root
// ahead on a host folder (base, see prebuildRoot) and opens what lies
// below it through fd, a descriptor of that folder opened before it was
// covered; fd is -1 when nothing is covered.
type hostPaths struct {
	base string
	fd   int
}

// open opens path with flags (O_PATH and the like; no O_CREAT).
func (hp hostPaths) open(path string, flags int) (int, error) {
	if hp.fd >= 0 && Under(path, []string{hp.base}) {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, hp.base), "/")
		if rel == "" {
			rel = "."
		}
		return unix.Openat(hp.fd, rel, flags, 0)
	}
	return unix.Open(path, flags, 0)
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
	h.closeRunView()
}

// closeRunView closes what openRunView opened.
func (h *hostView) closeRunView() {
	for _, fd := range []int{h.skill, h.work} {
		if fd != 0 {
			unix.Close(fd)
		}
	}
	CloseGrants(h.grants)
	h.skill, h.work, h.grants = 0, 0, nil
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
//   - the aliases outside /tmp: grants typed through a symlink, at the
//     path as typed (makeAliases);
//   - then all of it read-only and nosuid, recursively, in one call: the
//     script can create nothing in "/";
//   - last, /proc: a fresh proc with a PID namespace (which needs the
//     host's proc to be visible, hence before pivot_root), else the
//     host's, bound in; it stays writable (/proc/self/oom_score_adj).
//
// Every other folder and file of the host's "/" is simply absent, and the
// cost does not depend on how many there are.
func buildRoot(cfg *config, h *hostView, root string) error {
	b := &rootBuilder{root: root}
	b.folders()
	b.system(h)
	// Before the /etc entries: MkdirAll must not meet a symlink that
	// resolves against the host's root, as an absolute one would here.
	for _, mt := range outsideMountPoints(cfg, h) {
		b.fail(mkMountPoint(root+mt.path, mt.folder))
	}
	// Those in /tmp come once its tmpfs is mounted (setupMounts).
	b.fail(makeAliases(cfg, root, "/", []string{"/tmp"}))
	b.etcAndDev(h, cfg.AllowNetwork)
	b.fail(readOnlyTree(root, b.bound))
	b.fail(mountProc(root, stageconfig.Has(cfg.Namespaces, stageconfig.LayerPIDNS)))
	return errors.Join(b.errs...)
}

// rootBuilder places host entries in the new root (see buildRoot) and
// keeps the bind mounts it made and the errors it met.
type rootBuilder struct {
	root  string
	bound []string // bind mounts, to be made read-only
	errs  []error
}

// fail keeps err, naming its paths as the script sees them (unroot).
func (b *rootBuilder) fail(err error) {
	if err != nil {
		b.errs = append(b.errs, unroot(b.root, err))
	}
}

// folders creates the root's own folders.
func (b *rootBuilder) folders() {
	for _, d := range []string{"/tmp", "/proc", "/dev", "/dev/pts", "/dev/shm", "/etc"} {
		b.fail(os.Mkdir(b.root+d, 0o755))
	}
}

// place binds e in (recursively with rec) or re-creates its symlink.
func (b *rootBuilder) place(e hostEntry, rec bool) {
	dst := b.root + e.path
	if e.link != "" {
		b.fail(os.Symlink(e.link, dst))
		return
	}
	if err := placeholder(dst, e.folder); err != nil {
		b.fail(err)
		return
	}
	flags := uintptr(unix.MS_BIND)
	if rec {
		flags |= unix.MS_REC
	}
	if err := unix.Mount(fdPath(e.fd), dst, "", flags, ""); err != nil {
		b.fail(fmt.Errorf("bind %s: %w", e.path, err))
		return
	}
	b.bound = append(b.bound, dst)
}

// system places the system folders.
func (b *rootBuilder) system(h *hostView) {
	for _, e := range h.system {
		b.place(e, true)
	}
}

// etcAndDev places the /etc entries and writes the files of etcOwn, then
// places the devices and the /dev links.
func (b *rootBuilder) etcAndDev(h *hostView, allowNetwork bool) {
	for _, e := range h.etc {
		b.fail(os.MkdirAll(filepath.Dir(b.root+e.path), 0o755))
		b.place(e, true)
	}
	for path, content := range etcOwn(allowNetwork) {
		b.fail(os.WriteFile(b.root+path, []byte(content), 0o644))
	}
	for _, dev := range llDevices() {
		if fd, ok := h.devices[dev]; ok {
			b.place(hostEntry{path: dev, fd: fd}, false)
		}
	}
	for link, target := range map[string]string{
		"/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0",
		"/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2",
	} {
		b.fail(os.Symlink(target, b.root+link))
	}
}

// mountProc mounts the root's /proc: a fresh proc with a PID namespace
// (which needs the host's proc to be visible, hence before pivot_root),
// else the host's, bound in; it stays writable (/proc/self/oom_score_adj).
func mountProc(root string, pidns bool) error {
	if pidns {
		if err := unix.Mount("proc", root+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mount /proc: %w", err)
		}
	} else if err := unix.Mount("/proc", root+"/proc", "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind /proc: %w", err)
	}
	return nil
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
		return fmt.Errorf("pivot_root: %w", unroot(root, err))
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
