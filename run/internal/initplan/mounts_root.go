//go:build linux && (amd64 || arm64)

package initplan

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

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
	m.hostSteps("system folders", func() {
		for _, e := range system {
			m.place(e, true, &bound)
		}
	})
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
	m.hostSteps("shared caches", func() {
		for _, p := range sharedCaches() {
			if e, ok := lookHostEntry(p); ok && e.folder {
				m.mkdirAll("mkdir "+filepath.Dir(p), m.root, m.at(filepath.Dir(p)), 0o755)
				m.place(e, true, &bound)
			}
		}
	})
	m.hostSteps("devices", func() {
		for _, dev := range devicesPresent() {
			m.place(hostEntry{path: dev}, false, &bound)
		}
	})
	for _, l := range [][2]string{
		{"/dev/fd", "/proc/self/fd"}, {"/dev/stdin", "/proc/self/fd/0"},
		{"/dev/stdout", "/proc/self/fd/1"}, {"/dev/stderr", "/proc/self/fd/2"},
	} {
		m.note("symlink", l[0], "->", l[1])
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
	m.note("read-only /etc")
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
		m.hostSteps("/etc masks", func() { m.note("mask", mk.path) })
		m.mount("mask "+mk.path, m.at(src), m.at(mk.path), "", unix.MS_BIND, "")
		bound = append(bound, m.at(mk.path))
	}
	own := etcOwn(m.cfg.AllowNetwork)
	for _, path := range slices.Sorted(maps.Keys(own)) {
		if e, ok := lookHostEntry(path); !ok || e.folder || e.link != "" {
			continue // nothing to mount on (see docs/security.md)
		}
		m.hostSteps("/etc files of the sandbox's own", func() { m.note("file", path, "(the sandbox's own)") })
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
	m.hostSteps("/etc link targets", func() {
		for _, t := range m.etcTargets {
			m.mkdirAll("mkdir "+filepath.Dir(t), m.root, m.at(filepath.Dir(t)), 0o755)
			m.place(hostEntry{path: t, target: t}, false, &bound)
		}
	})
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
		m.note("rbind /proc /proc (the host's)")
		m.mount("bind /proc", "/proc", m.at("/proc"), "", unix.MS_BIND|unix.MS_REC, "")
		return
	}
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	m.note("proc /proc (the PID namespace's own; nosuid,nodev,noexec)")
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
	m.note("read-only / and every mount below it, nosuid")
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
