//go:build linux && (amd64 || arm64)

package initplan

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// Flags and options of the small tmpfs mounts: the root, the deny-list
// masks, /dev/shm.
const (
	maskFlags   = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	shmOptions  = "size=64m,nr_inodes=1024,mode=1777"
	rootOptions = "size=1m,nr_inodes=4096,mode=0755"
	// oldRoot is where pivot_root puts the host's tree, in the private
	// /tmp (the new root is read-only by then), until enterRoot
	// detaches it.
	oldRoot = "/tmp/.host-root"
)

// mounter emits the mount namespace's layer: the root is built on a
// host folder (root, see rootBase) while the host's tree is still the
// root; base (regBase) holds a descriptor of that folder opened before it
// was covered, through which host paths below it are opened.
type mounter struct {
	*compiler
	root string
	base initproc.Register
}

// setupMounts builds the mount namespace's view of the file system, as
// bubblewrap does: a fresh tmpfs root holding only what the script needs,
// then pivot_root, and the host's tree detached.
//
//   - "/" becomes recursively private first, so nothing mounted here
//     propagates to the host (and nothing from the host appears later);
//   - the new root is a tmpfs mounted on a host folder (rootBase) and
//     built there while the host's tree is still the root, because bind
//     mounts need their sources in this mount namespace;
//   - buildRoot puts in the system folders read-only, the host's /etc
//     by a rule (buildEtc), a minimal /dev, a private /proc (fresh with a PID
//     namespace), and mount points for what follows; no other host folder
//     or file of "/" exists in it, and its cost does not grow with their
//     number;
//   - /tmp becomes a private, writable tmpfs;
//   - the grants, the skill and the work folders are bound in at their own
//     paths from descriptors opened on the host's tree (or attached from
//     the supervisor's trees, see run's handOver);
//   - unless it is kept, the work folder is a folder of the /tmp tmpfs
//     (when it lies in /tmp, the default) or a tmpfs of its own, capped at
//     WorkDirMB (disk fill is then impossible);
//   - the aliases in /tmp are made (buildRoot made the others); the
//     deny-list entries inside grants are masked, the skill folder is made
//     read-only, /dev/shm is a small private tmpfs;
//   - enterRoot switches to the new root and detaches the host's tree, so
//     /proc/self/mountinfo lists the sandbox's mounts only.
//
// Landlock enforces the read/write split too; this layer is what still
// holds where Landlock is missing, and it hides host paths entirely.
//
// Only a refusal of the first mount(2), which changes nothing, leaves the
// layer as absent as on a host without it; every later failure leaves it
// built part-way and refuses the run: a grant, mask or read-only lock that
// did not apply must not go unnoticed behind "mountns missing".
func (c *compiler) setupMounts() {
	m := c.newMounter()
	if pre := c.in.Prefix; pre != nil && pre.root {
		if m.prebuiltFits() {
			m.prebuiltRunParts()
			return
		}
		m.discardPrebuilt()
	}
	m.mount("make / private", "", "/", "", unix.MS_REC|unix.MS_PRIVATE, "",
		initproc.Unavailable(unix.EPERM, unix.EACCES, unix.ENOSYS))
	m.openBase()
	m.mount("root tmpfs on "+m.root, "tmpfs", m.root, "tmpfs", maskFlags, rootOptions)
	system := systemEntries()
	m.buildRoot(system)
	m.mountRunParts()
	m.mountShm()
	m.closeReg(m.base)
	m.enterRoot()
}

// newMounter starts the mount namespace's steps, on the root folder of
// rootBase (or the one a pooled prefix built on, with its descriptor).
func (c *compiler) newMounter() *mounter {
	m := &mounter{compiler: c, root: rootBase(c.cfg), base: regBase}
	if pre := c.in.Prefix; pre != nil && pre.root {
		m.root = pre.rootBase
	}
	return m
}

// openBase opens the root's folder (into m.base): the host's paths below
// it are opened through this descriptor once the root's tmpfs covers them.
func (m *mounter) openBase() {
	m.b.Sys("open "+m.root, unix.SYS_OPENAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(m.root), imm(unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC)}, initproc.Into(m.base))
}

// mountShm mounts the root's /dev/shm, private and small: POSIX
// semaphores and shared memory (Python's multiprocessing locks and pools)
// need it. Its pages are memory outside RLIMIT_AS, hence the size cap.
func (m *mounter) mountShm() {
	m.mount("/dev/shm", "tmpfs", m.root+"/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, shmOptions)
}

// rootBase is the host folder the new root's tmpfs is first mounted on.
// It must exist; pivot_root moves the tmpfs away from it, and anything it
// hides meanwhile is opened through mounter.base.
func rootBase(cfg *stageconfig.Config) string {
	if st, err := os.Lstat("/tmp"); err == nil && st.IsDir() {
		return "/tmp"
	}
	return cfg.WorkDir
}

// hostOpen opens path, a path of the host's tree, into r with flags:
// below the root's folder through m.base, since the root's tmpfs covers
// it now.
func (m *mounter) hostOpen(desc, path string, flags int, r initproc.Register, opts ...initproc.Opt) {
	dir, p := num(unix.AT_FDCWD), path
	if rel, ok := strings.CutPrefix(path, m.root+"/"); ok {
		dir, p = reg(m.base), rel
	} else if path == m.root {
		dir, p = reg(m.base), "."
	}
	m.b.Sys(desc, unix.SYS_OPENAT, []initproc.Arg{dir, m.ref(p), imm(uint64(flags))}, append([]initproc.Opt{initproc.Into(r)}, opts...)...)
}

// at is path in the new root being built (root+path), as the host sees it.
func (m *mounter) at(path string) string {
	if path == "/" {
		return m.root
	}
	return m.root + path
}

// place binds the host entry e in (recursively with rec) or re-creates
// its symlink; bound collects the bind mounts.
func (m *mounter) place(e hostEntry, rec bool, bound *[]string) {
	dst := m.at(e.path)
	if e.link != "" {
		m.symlink("symlink "+e.path, e.link, dst)
		return
	}
	m.placeholder("mount point "+e.path, dst, e.folder)
	fd := m.fd
	if e.target != "" {
		// A link of /etc bound from the file it leads to: opened with
		// no symlink on the way, and still a regular file.
		m.openBeneath("open "+e.target, "/", e.target, fd, unix.O_PATH|unix.O_CLOEXEC)
		m.fstat("fstat "+e.target, fd)
		m.assertType(e.target+" is no longer a regular file", unix.S_IFREG, false)
	} else {
		m.hostOpen("open "+e.path, e.path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, fd)
	}
	flags := uintptr(unix.MS_BIND)
	if rec {
		flags |= unix.MS_REC
	}
	m.mountFD("bind "+e.path, fd, dst, flags)
	m.closeReg(fd)
	*bound = append(*bound, dst)
}

// openBeneath opens path (absolute, as seen from the folder dir, a host
// path) below dir with openat2(2) into r, following no symlink on the way
// and none at the end (a final symlink is opened itself, with O_PATH and
// O_NOFOLLOW in flags): a path checked earlier by name can have been
// swapped since by anyone who may write to one of its folders (a
// concurrent run with a write grant there, the user). What this opens is
// then either the file that was checked, which the caller compares by
// device and inode, or an error, never the target of a symlink put in its
// place. Mounting onto the descriptor then leaves no second lookup to
// redirect.
func (m *mounter) openBeneath(desc, dir, path string, r initproc.Register, flags uint64, opts ...initproc.Opt) int {
	d := m.dir
	m.b.Sys("open "+dir, unix.SYS_OPENAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(strings.TrimSuffix(dir, "/") + "/"), imm(unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC)}, initproc.Into(d))
	how := unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	hd := initproc.Struct(m.b, &how)
	rel := strings.TrimPrefix(path, "/")
	if rel == "" {
		rel = "."
	}
	i := m.b.Sys(desc, unix.SYS_OPENAT2, []initproc.Arg{reg(d), m.ref(rel), initproc.Ref(hd), imm(24)}, append([]initproc.Opt{initproc.Into(r), initproc.RetryAgain()}, opts...)...)
	m.closeReg(d)
	return i
}

// buildRoot fills the sandbox's root, a fresh tmpfs mounted on m.root, as
// bubblewrap does, while the host's tree is still the root:
//
//   - the system folders of llSystemDirs, bound in (recursively) or
//     re-created as the host's symlinks (/bin -> usr/bin);
//   - /etc, the host's, with masks and the files of etcOwn (buildEtc);
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
func (m *mounter) buildRoot(system []hostEntry) {
	m.folders()
	var bound []string
	for _, e := range system {
		m.place(e, true, &bound)
	}
	// Before /etc: a folder made on the way must not meet a symlink that
	// resolves against the host's root, as an absolute one would here.
	m.runMountPoints(system)
	bound = m.etcAndDev(bound)
	m.readOnlyTree(bound)
	m.mountProc()
}

// folders creates the root's own folders.
func (m *mounter) folders() {
	for _, d := range []string{"/tmp", "/proc", "/dev", "/dev/pts", "/dev/shm"} {
		m.mkdir("mkdir "+d, m.at(d), 0o755, false)
	}
}

// runMountPoints creates the mount points of the run's parts outside
// /tmp and the system folders, and the aliases outside /tmp (those in /tmp
// come once its tmpfs is mounted, see mountRunParts).
func (m *mounter) runMountPoints(system []hostEntry) {
	for _, mt := range m.outsideMountPoints(system) {
		m.mkMountPoint("mount point "+mt.path, m.root, m.at(mt.path), mt.folder)
	}
	// The host's symlinks in /etc are there as they are.
	m.makeAliases("/", []string{"/tmp", "/etc"})
}

// etcAndDev builds /etc (buildEtc) and shows the caches of sharedCaches,
// then places the devices and the /dev links; it returns bound with its
// bind mounts added.
func (m *mounter) etcAndDev(bound []string) []string {
	bound = m.buildEtc(bound)
	for _, p := range sharedCaches() {
		if e, ok := lookHostEntry(p); ok && e.folder {
			m.mkdirAll("mkdir "+filepath.Dir(p), m.root, m.at(filepath.Dir(p)), 0o755)
			m.place(e, true, &bound)
		}
	}
	for _, dev := range devicesPresent() {
		m.place(hostEntry{path: dev}, false, &bound)
	}
	for _, l := range [][2]string{
		{"/dev/fd", "/proc/self/fd"}, {"/dev/stdin", "/proc/self/fd/0"},
		{"/dev/stdout", "/proc/self/fd/1"}, {"/dev/stderr", "/proc/self/fd/2"},
	} {
		m.symlink("symlink "+l[0], l[1], m.at(l[0]))
	}
	return bound
}

// Sources of the /etc masks and of etcOwn's files in the root's tmpfs,
// removed once mounted (a mount keeps its source).
const (
	etcEmptyFile = "/.skill-sandbox-etc-empty"
	etcEmptyDir  = "/.skill-sandbox-etc-empty.d"
	etcOwnSource = "/.skill-sandbox-etc-own"
)

// buildEtc shows the host's /etc by a rule (see etc_rule.go): one
// recursive bind of it, read-only at once, so that nothing made in the
// root afterwards can land in the host's /etc; not id-mapped, so the
// kernel checks the script's identity on the host against its owners and
// modes. Over it: the masks of etcMasks (an empty file, or an empty folder
// mode 0555, bound on each), the files of etcOwn (written in the root's
// tmpfs and bound on the host's file, when that is a regular file), and
// with AllowNetwork the files etcLinkTargets names, at their own paths.
// The masks are found when the program is compiled (for a pooled init
// process, when it starts, see CompilePrefix) and mounted by path: /etc
// and its folders are root's, so no one the masks guard against can swap
// them meanwhile; an entry swapped anyway fails its mount (a folder onto
// a file) and refuses the run. It returns bound with its mounts added.
func (m *mounter) buildEtc(bound []string) []string {
	m.place(hostEntry{path: "/etc", folder: true}, true, &bound)
	m.b.Remount(fmt.Sprintf("remount (flags %#x) /etc", unix.MS_RDONLY), m.b.String(m.at("/etc")), unix.MS_RDONLY)
	masks := etcMasks("/etc", m.etcListed, m.cfg.AllowNetwork, m.etcReader(), runPaths(m.cfg))
	made := map[bool]bool{}
	for _, mk := range masks {
		src := etcEmptyFile
		if mk.folder {
			src = etcEmptyDir
		}
		if !made[mk.folder] {
			made[mk.folder] = true
			if mk.folder {
				m.mkdir("mkdir "+src, m.at(src), 0o555, false)
			} else {
				m.createFile("create "+src, m.at(src))
			}
		}
		m.mount("mask "+mk.path, m.at(src), m.at(mk.path), "", unix.MS_BIND, "")
		bound = append(bound, m.at(mk.path))
	}
	own := etcOwn(m.cfg.AllowNetwork)
	for _, path := range slices.Sorted(maps.Keys(own)) {
		if e, ok := lookHostEntry(path); !ok || e.folder || e.link != "" {
			continue // nothing to mount on (see docs/security.md)
		}
		m.writeFile("write "+path, m.at(etcOwnSource), own[path])
		m.mount("bind "+path, m.at(etcOwnSource), m.at(path), "", unix.MS_BIND, "")
		m.unlink("remove "+etcOwnSource, etcOwnSource, 0)
		bound = append(bound, m.at(path))
	}
	if made[false] {
		m.unlink("remove "+etcEmptyFile, etcEmptyFile, 0)
	}
	if made[true] {
		m.unlink("remove "+etcEmptyDir, etcEmptyDir, unix.AT_REMOVEDIR)
	}
	for _, t := range m.etcTargets {
		m.mkdirAll("mkdir "+filepath.Dir(t), m.root, m.at(filepath.Dir(t)), 0o755)
		m.place(hostEntry{path: t, target: t}, false, &bound)
	}
	return bound
}

// unlink removes path (in the new root) with unlinkat(2) flags.
func (m *mounter) unlink(desc, path string, flags uint64) {
	m.b.Sys(desc, unix.SYS_UNLINKAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(m.at(path)), imm(flags)})
}

// mountProc mounts the root's /proc: a fresh proc with a PID namespace
// (which needs the host's proc to be visible, hence before pivot_root),
// else the host's, bound in; it stays writable (/proc/self/oom_score_adj).
//
// The kernel mounts a new proc only where a visible one has the same
// atime flags when they are locked (a mount copied into a less privileged
// namespace: every host mount, for an unprivileged caller or inside a
// container). A /proc mounted noatime or strictatime, not the usual
// relatime, so refuses the first mount with EPERM; it is then mounted
// again with the host /proc's atime flags, read with statfs(2). The usual
// start runs the first mount alone.
func (m *mounter) mountProc() {
	if !stageconfig.Has(m.cfg.Namespaces, stageconfig.LayerPIDNS) {
		m.mount("bind /proc", "/proc", m.at("/proc"), "", unix.MS_BIND|unix.MS_REC, "")
		return
	}
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	retry, notRel, strict, done := m.b.NewLabel(), m.b.NewLabel(), m.b.NewLabel(), m.b.NewLabel()
	m.mount(procMountDesc, "proc", m.at("/proc"), "proc", flags, "", initproc.ErrTo(m.tmp, retry))
	m.b.Jump(done)
	m.b.Mark(retry)
	// statBuf holds a struct statfs as well (see statfsFits).
	m.b.Sys("statfs /proc", unix.SYS_STATFS, []initproc.Arg{m.ref("/proc"), initproc.Ref(m.statBuf)})
	m.b.Load(m.tmp2, m.statBuf+initproc.Data(unsafe.Offsetof(unix.Statfs_t{}.Flags)), 8)
	// ST_NOATIME and ST_NODIRATIME are MS_NOATIME and MS_NODIRATIME;
	// ST_RELATIME is not MS_RELATIME; neither of noatime and relatime
	// is strictatime.
	m.b.And(m.tmp, reg(m.tmp2), imm(unix.ST_NOATIME|unix.ST_NODIRATIME))
	m.b.SkipIf(initproc.MaskClr, reg(m.tmp2), imm(unix.ST_RELATIME), notRel)
	m.b.Or(m.tmp, reg(m.tmp), imm(unix.MS_RELATIME))
	m.b.Mark(notRel)
	m.b.SkipIf(initproc.MaskSet, reg(m.tmp2), imm(unix.ST_NOATIME|unix.ST_RELATIME), strict)
	m.b.Or(m.tmp, reg(m.tmp), imm(unix.MS_STRICTATIME))
	m.b.Mark(strict)
	m.b.Or(m.tmp, reg(m.tmp), imm(flags))
	m.b.Sys(procMountDesc+" (with the host /proc's atime flags)", unix.SYS_MOUNT,
		[]initproc.Arg{m.ref("proc"), m.ref(m.at("/proc")), m.ref("proc"), reg(m.tmp), imm(0)})
	m.b.Mark(done)
}

// procMountDesc names the mount of a fresh /proc in failures; run's
// explanation of a refused one (explainIncomplete) looks for it.
const procMountDesc = "mount /proc"

// statfsFits fails to compile where a struct statfs does not fit in the
// struct stat buffer that mountProc reuses for it.
const statfsFits = uint(unsafe.Sizeof(unix.Stat_t{}) - unsafe.Sizeof(unix.Statfs_t{}))

// readOnlyTree makes the root's mount and every mount below it read-only
// and nosuid with one mount_setattr(2). Where that fails (before Linux
// 5.12, or a container's seccomp policy that does not know the call), the
// root and each of bound (the bind mounts below it) are remounted one by
// one. Device nodes stay usable: a read-only mount refuses writes to
// regular files, folders and symlinks, not to character devices.
func (m *mounter) readOnlyTree(bound []string) {
	fallback, done := m.b.NewLabel(), m.b.NewLabel()
	m.mountSetattr("mount_setattr "+m.root, 0, m.root, unix.AT_RECURSIVE, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID,
		initproc.ErrTo(m.tmp, fallback))
	m.b.Jump(done)
	m.b.Mark(fallback)
	for _, p := range append([]string{m.root}, bound...) {
		m.b.Remount("remount (flags 0x"+strconv.FormatUint(unix.MS_RDONLY, 16)+") "+m.unroot(p), m.b.String(p), unix.MS_RDONLY)
	}
	m.b.Mark(done)
}

// unroot names path under the new root as the script will see it: /tmp/usr
// (root /tmp) as /usr.
func (m *mounter) unroot(path string) string {
	if path == m.root {
		return "/"
	}
	if rest, ok := strings.CutPrefix(path, m.root); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	return path
}

// mountTarget is a path to create in the root tmpfs.
type mountTarget struct {
	path   string
	folder bool
}

// outsideMountPoints lists the mount points buildRoot must create: the
// skill folder, the work folder (unless it is a folder of the private
// /tmp) and the grants, except those in /tmp or /proc (mounted over
// later) and in the system folders and /etc (bound in whole).
func (m *mounter) outsideMountPoints(system []hostEntry) []mountTarget {
	skip := []string{"/tmp", "/proc", "/etc"}
	for _, e := range system {
		skip = append(skip, e.path)
	}
	mps := []mountTarget{{m.cfg.Skill, true}, {m.cfg.WorkDir, true}}
	for i, g := range m.cfg.Grants {
		mps = append(mps, mountTarget{g.Path, m.grantFolder(i)})
	}
	var out []mountTarget
	for _, mp := range mps {
		if !Under(mp.path, skip) && mp.path != "/" {
			out = append(out, mp)
		}
	}
	return out
}

// grantFolder says whether grant i is a folder.
func (m *mounter) grantFolder(i int) bool {
	return i >= len(m.in.GrantFolders) || m.in.GrantFolders[i]
}

// makeHostWorkDir makes the work folder on the host when the mount
// namespace's layer is not applied (see Input.MakeWorkDir), as the init
// process's identity: the run then uses the host's folder (its Landlock
// rule, its working folder). mkdir fails on anything already there.
func (c *compiler) makeHostWorkDir() {
	made := c.b.NewLabel()
	c.b.SkipIfApplied(bit(stageconfig.LayerMountNS), made)
	c.b.Sys("make the work folder "+c.cfg.WorkDir, unix.SYS_MKDIRAT, []initproc.Arg{num(unix.AT_FDCWD), c.ref(c.cfg.WorkDir), imm(0o700)})
	c.b.Mark(made)
}

// mountRunParts mounts what is the run's in the new root: the private
// /tmp, the grants, the skill and the work folders, the masks of the
// deny-list entries inside grants, makes the skill folder read-only, and
// shows the machine at the run's size (machineView).
func (m *mounter) mountRunParts() {
	cfg := m.cfg
	// A private /tmp: programs that write /tmp by name, ignoring TMPDIR
	// (LibreOffice, many scripts), work. When the work folder lies in
	// /tmp (the default) it is a folder of this same tmpfs, so both count
	// against one cap of WorkDirMB.
	shared := cfg.WorkDirMB > 0 && Under(cfg.WorkDir, []string{"/tmp"})
	tmpMB := cfg.WorkDirMB
	if tmpMB == 0 {
		tmpMB = stageconfig.DefaultWorkDirMB
	}
	m.mount("/tmp tmpfs", "tmpfs", m.at("/tmp"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, tmpfsOptions(tmpMB, "1777"))
	m.bindGrants()
	if cfg.SkillTree != 0 {
		m.mkdirAll("skill folder "+cfg.Skill, m.root, m.at(cfg.Skill), 0o755)
		m.attachTree("skill folder "+cfg.Skill, cfg.SkillTree, m.at(cfg.Skill))
	} else {
		m.rebind("skill folder "+cfg.Skill, cfg.Skill)
	}
	switch {
	case shared:
		m.mkdirAll("work folder "+cfg.WorkDir, m.root, m.at(cfg.WorkDir), 0o700)
	case cfg.WorkDirMB > 0:
		// A size-capped work folder: a full disk is not the script's to
		// cause. Its mount point was made with the root (see
		// outsideMountPoints).
		m.mount("work folder tmpfs", "tmpfs", m.at(cfg.WorkDir), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, tmpfsOptions(cfg.WorkDirMB, "0700"))
	default:
		// A kept work folder, on the host's disk: as the tmpfs would
		// be, nosuid, nodev and noexec, so that a program the script
		// writes there cannot run where Landlock is missing.
		m.rebind("work folder "+cfg.WorkDir, cfg.WorkDir)
		fallback, done := m.b.NewLabel(), m.b.NewLabel()
		m.mountSetattr("mount_setattr "+cfg.WorkDir, 0, m.at(cfg.WorkDir), unix.AT_RECURSIVE,
			unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, initproc.ErrTo(m.tmp, fallback))
		m.b.Jump(done)
		m.b.Mark(fallback)
		m.b.Remount(fmt.Sprintf("remount (flags %#x) %s", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, cfg.WorkDir),
			m.b.String(m.at(cfg.WorkDir)), unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC)
		m.b.Mark(done)
	}
	m.makeAliases("/tmp", nil)
	m.maskDenied()
	m.b.Remount(fmt.Sprintf("remount (flags %#x) %s", unix.MS_RDONLY, cfg.Skill), m.b.String(m.at(cfg.Skill)), unix.MS_RDONLY)
	m.machineView()
}

// rebind bind-mounts the host folder path onto itself in the new root,
// creating the mount point (in the private /tmp) first when it is
// missing.
func (m *mounter) rebind(desc, path string) {
	fd := m.fd
	m.hostOpen(desc+": open", path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, fd)
	m.mkdirAll(desc, m.root, m.at(path), 0o755)
	m.mountFD(desc+": rebind", fd, m.at(path), unix.MS_BIND|unix.MS_REC)
	m.closeReg(fd)
}

// attachTree attaches the supervisor's tree, a detached copy of a host
// mount on the init process's descriptor tree, at path, and makes it and
// every mount below it private. The copy is a peer of the host's mount
// when that one is shared (systemd makes "/" shared), and every mount
// made inside it afterwards (the masks of maskDenied, anything mounted on
// a grant) would then be made in the host's mount namespace too, and
// outlive the run.
func (m *mounter) attachTree(desc string, tree int, path string) {
	m.b.Sys(desc+": move_mount", unix.SYS_MOVE_MOUNT, []initproc.Arg{num(tree), m.ref(""), num(unix.AT_FDCWD), m.ref(path), imm(unix.MOVE_MOUNT_F_EMPTY_PATH)})
	m.mount(desc+": make private", "", path, "", unix.MS_REC|unix.MS_PRIVATE, "")
	m.b.Sys("close", unix.SYS_CLOSE, []initproc.Arg{num(tree)}, initproc.IgnoreErrors())
}

// tmpfsOptions are those of a size-capped tmpfs of sizeMB MiB (with 64
// inodes per MiB, at least 1024) and the given octal mode.
func tmpfsOptions(sizeMB int, mode string) string {
	return fmt.Sprintf("size=%dm,nr_inodes=%d,mode=%s", sizeMB, max(sizeMB*64, 1024), mode)
}

// enterRoot makes the root the root with pivot_root(2) and detaches the
// host's tree: nothing of the host stays reachable but what was bound in,
// and /proc/self/mountinfo lists only the sandbox's mounts.
func (m *mounter) enterRoot() {
	m.mkdir("pivot_root: mkdir "+oldRoot, m.at(oldRoot), 0o700, false)
	m.b.Sys("pivot_root", unix.SYS_PIVOT_ROOT, []initproc.Arg{m.ref(m.root), m.ref(m.at(oldRoot))})
	m.b.Sys("chdir /", unix.SYS_CHDIR, []initproc.Arg{m.ref("/")})
	m.b.Sys("detach the host's root", unix.SYS_UMOUNT2, []initproc.Arg{m.ref(oldRoot), imm(unix.MNT_DETACH)})
	m.b.Sys("remove "+oldRoot, unix.SYS_UNLINKAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(oldRoot), imm(unix.AT_REMOVEDIR)})
}
