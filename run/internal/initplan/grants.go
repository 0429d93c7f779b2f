//go:build linux && (amd64 || arm64)

package initplan

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// swapped is the message of a grant, mask or folder found replaced since
// the supervisor checked it: an attack under way, which refuses the run
// whatever AllowDegraded says.
func swapped(format string, args ...any) string {
	return fmt.Sprintf("%v: ", stageconfig.ErrBadConfig) + fmt.Sprintf(format, args...)
}

// bindGrants mounts each grant at its own path in the new root, parents
// first: the supervisor's tree when there is one, else a bind mount of the
// host path, opened and checked to be the file the supervisor saw. Mount
// points missing in the private /tmp are created. Then the mount and
// everything below it gets nosuid, nodev and (but for an interpreter's
// environment, GrantMount.Exec) noexec, and read grants
// become read-only, recursively (mount_setattr(2)). Last, the folders on
// the way to read-only parts and masks in write grants are pinned, and
// the read-only parts locked.
func (m *mounter) bindGrants() {
	cfg := m.cfg
	for i, g := range cfg.Grants {
		dst := m.at(g.Path)
		desc := "grant " + g.Path
		if m.grantNeedsMountPoint(i) {
			m.mkMountPoint(desc, m.root, dst, m.grantFolder(i))
		}
		if g.Tree != 0 {
			m.attachTree(desc, g.Tree, dst)
			for _, b := range g.Below {
				m.attachBelow(desc, b)
			}
		} else {
			m.bindHost(desc, g, dst)
		}
		set := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
		if !g.Exec {
			set |= unix.MOUNT_ATTR_NOEXEC
		}
		if !g.Write {
			set |= unix.MOUNT_ATTR_RDONLY
		}
		if m.listing {
			m.note(mountAttrWords(set), g.Path, "(recursive)")
		}
		m.mountSetattr(desc+": mount_setattr", 0, dst, unix.AT_RECURSIVE, set)
	}
	m.pinParents()
	for _, ro := range cfg.ReadOnly {
		m.note("read-only", ro.Path, "(nosuid,nodev,noexec; recursive)")
		fd := m.openChecked("read-only "+ro.Path, ro)
		m.attachCopy("read-only "+ro.Path, fd, fd, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
		m.closeReg(fd)
	}
}

// bindHost binds grant g from the host path, opened and checked to be
// the file the supervisor saw, onto dst. Alone when planning saw no mount
// below it: a mount made there since is locked here (copied from a more
// privileged namespace), and a bind without MS_REC of a folder holding a
// locked mount fails (EINVAL), refusing the run. The same rule forbids
// binding alone a grant that held mounts, so that one is bound
// recursively and then refused unless exactly the g.Held mounts planning
// counted came along (checkHeld).
func (m *mounter) bindHost(desc string, g stageconfig.GrantMount, dst string) {
	m.note(map[bool]string{false: "bind", true: "rbind"}[g.Held > 0], g.Path, g.Path, "(checked: the file the supervisor saw)")
	fd := m.fd
	m.hostOpen("open grant "+g.Path, g.Path, unix.O_PATH|unix.O_CLOEXEC, fd)
	m.fstat(desc+": fstat", fd)
	m.assertSame(swapped("%s changed between its check and its mount (replaced, or swapped for a symlink); refused", g.Path), g.Dev, g.Ino)
	flags := uintptr(unix.MS_BIND)
	if g.Held > 0 {
		flags |= unix.MS_REC
	}
	m.mountFD(desc+": bind", fd, dst, flags)
	m.closeReg(fd)
	if g.Held > 0 {
		m.checkHeld(desc, g, dst)
	}
}

// checkHeld refuses the run unless the recursive bind of grant g at dst
// holds exactly the g.Held mounts planning counted below it: listmount(2)
// (Linux 6.8) of the bind's unique mount id lists every mount below it.
// Fewer mean one was unmounted, more that one was made since planning;
// either is refused as a swap. Without listmount the count cannot be
// taken and the run is refused, naming the kernel it needs.
func (m *mounter) checkHeld(desc string, g stageconfig.GrantMount, dst string) {
	m.note("check", g.Path, fmt.Sprintf("holds the %d mounts planning saw below it, no more (listmount)", g.Held))
	stx := m.b.Zero(int(unsafe.Sizeof(unix.Statx_t{})))
	m.b.Sys(desc+": statx (its mount id)", unix.SYS_STATX, []initproc.Arg{num(unix.AT_FDCWD), m.ref(dst), imm(unix.AT_SYMLINK_NOFOLLOW), imm(unix.STATX_MNT_ID_UNIQUE), initproc.Ref(stx)})
	m.b.Load(m.tmp2, stx+initproc.Data(unsafe.Offsetof(unix.Statx_t{}.Mask)), 4)
	m.b.And(m.tmp2, reg(m.tmp2), imm(unix.STATX_MNT_ID_UNIQUE))
	m.b.Assert(fmt.Sprintf("%s holds other mounts, and this kernel cannot list the mounts of its bind (statx STATX_MNT_ID_UNIQUE and listmount(2) came with Linux 6.8) to refuse one made after planning; run as root, or grant folders that hold none", g.Path),
		initproc.Ne, reg(m.tmp2), imm(0), false)
	req := m.b.Zero(24) // struct mnt_id_req, MNT_ID_REQ_SIZE_VER0
	m.b.Store(req, 4, imm(24))
	m.b.Load(m.tmp2, stx+initproc.Data(unsafe.Offsetof(unix.Statx_t{}.Mnt_id)), 8)
	m.b.Store(req+8, 8, reg(m.tmp2))
	ids := m.b.Zero(8 * (g.Held + 1))
	m.b.Sys(desc+": listmount (Linux 6.8)", unix.SYS_LISTMOUNT, []initproc.Arg{initproc.Ref(req), initproc.Ref(ids), imm(uint64(g.Held + 1)), imm(0)}, initproc.Into(m.tmp2))
	msg := swapped("%s holds other mounts than the %d planning saw below it (one was made or unmounted since); refused", g.Path, g.Held)
	m.changed[m.b.Assert(msg, initproc.Eq, reg(m.tmp2), imm(uint64(g.Held)), true)] = msg
}

// attachBelow attaches the supervisor's clone of b, a mount planning saw
// below a grant and checked again (grants.OpenSubmount), at its path in
// the grant just attached, made private as attachTree's are. Its mount
// point is opened without following a symlink: one swapped in on the way
// refuses the run.
func (m *mounter) attachBelow(desc string, b stageconfig.SubMount) {
	desc += ": the mount " + b.Path + " below it"
	m.note("attach the supervisor's copy of", b.Path, "at", b.Path, "(alone, private; a mount planning saw below a grant)")
	fd := m.fd
	i := m.openBeneath(desc+": openat2", m.root, b.Path, fd, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, initproc.ChangedOn(unix.ELOOP, unix.EXDEV))
	m.changed[i] = desc + ": " + swapped("a folder on the path of %s is now a symlink (swapped since the check); refused", b.Path)
	m.b.Sys(desc+": move_mount", unix.SYS_MOVE_MOUNT, []initproc.Arg{num(b.Tree), m.ref(""), reg(fd), m.ref(""),
		imm(unix.MOVE_MOUNT_F_EMPTY_PATH | unix.MOVE_MOUNT_T_EMPTY_PATH)})
	m.closeReg(fd)
	m.mount(desc+": make private", "", m.at(b.Path), "", unix.MS_REC|unix.MS_PRIVATE, "")
	m.b.Sys("close", unix.SYS_CLOSE, []initproc.Arg{num(b.Tree)}, initproc.IgnoreErrors())
}

// grantNeedsMountPoint reports whether grant i's mount point must be made
// when it is bound: in the private /tmp, unless it lies inside an earlier
// grant (bound from the host, which has it). Elsewhere it lies in a system
// folder, which has it, or buildRoot made it (outsideMountPoints).
func (m *mounter) grantNeedsMountPoint(i int) bool {
	g := m.cfg.Grants[i]
	for _, before := range m.cfg.Grants[:i] {
		if Under(g.Path, []string{before.Path}) {
			return false
		}
	}
	return Under(g.Path, []string{"/tmp"})
}

// openChecked opens g.Path in the new root without following any symlink
// (openBeneath) and checks that it is the file the supervisor saw. A
// symlink met on the way or another file there is a swap since the check,
// which refuses the run. With gone set, a missing file jumps there.
func (m *mounter) openChecked(desc string, g stageconfig.GrantMount, gone ...initproc.Label) initproc.Register {
	fd := m.fd
	opts := []initproc.Opt{initproc.ChangedOn(unix.ELOOP, unix.EXDEV)}
	if len(gone) > 0 {
		opts = append(opts, initproc.SkipOn(unix.ENOENT, gone[0]))
	}
	i := m.openBeneath(desc+": openat2 "+g.Path, m.root, g.Path, fd, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, opts...)
	m.changed[i] = desc + ": " + swapped("a folder on the path of %s is now a symlink (swapped since the check); refused", g.Path)
	m.fstat(desc+": fstat", fd)
	m.assertSame(desc+": "+swapped("%s changed between its check and its mount (replaced, or swapped for a symlink); refused", g.Path), g.Dev, g.Ino)
	return fd
}

// attachCopy attaches a copy of the mount of the file open on src
// (open_tree(2) with OPEN_TREE_CLONE, recursively) onto the file or folder
// open on target, with the mount attributes set (every mount of the
// copy). The attributes are set on the detached copy before it is
// attached, and both ends are descriptors: no path is looked up again.
func (m *mounter) attachCopy(desc string, src, target initproc.Register, set uint64) {
	tree := m.tree
	m.b.Sys(desc+": open_tree", unix.SYS_OPEN_TREE, []initproc.Arg{reg(src), m.ref(""),
		imm(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_EMPTY_PATH | unix.AT_RECURSIVE)}, initproc.Into(tree))
	m.mountSetattr(desc+": mount_setattr", tree, "", unix.AT_RECURSIVE, set)
	m.b.Sys(desc+": move_mount", unix.SYS_MOVE_MOUNT, []initproc.Arg{reg(tree), m.ref(""), reg(target), m.ref(""),
		imm(unix.MOVE_MOUNT_F_EMPTY_PATH | unix.MOVE_MOUNT_T_EMPTY_PATH)})
	m.closeReg(tree)
}

// pinParents makes every folder between a write grant and a read-only
// part or a masked entry inside it a mount point, by attaching a copy of
// its own mount onto it. rename(2) and rmdir(2) refuse to move or remove
// a mount point (EBUSY), but not a folder above one, whose mounts move
// with it: renaming .git out of the way under a write grant of a project
// took .git/hooks' read-only mount along, and the script then created a
// fresh .git/hooks/pre-commit where the host would run it. Pinned, the
// path from the grant down to each entry stays as it is. Each folder is
// opened without following a symlink (openBeneath); one that is gone is
// skipped (its entry is gone too, see maskDenied).
func (m *mounter) pinParents() {
	cfg := m.cfg
	pinned := map[string]bool{}
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
			m.pinFolder(dir)
		}
	}
}

// pinFolder attaches a copy of the mount of dir (in the new root) onto dir
// itself, keeping the write grant's attributes (writable, nosuid, nodev,
// noexec) and the mounts below it.
func (m *mounter) pinFolder(dir string) {
	desc := "pin " + dir
	m.note("pin", dir, "(a mount point, which rename and rmdir refuse)")
	gone := m.b.NewLabel()
	fd := m.fd
	i := m.openBeneath(desc+": openat2", m.root, dir, fd, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC,
		initproc.ChangedOn(unix.ELOOP, unix.EXDEV), initproc.SkipOn(unix.ENOENT, gone))
	m.changed[i] = desc + ": " + swapped("a folder on the path of %s is now a symlink (swapped since the check); refused", dir)
	m.fstat(desc+": fstat", fd)
	msg := desc + ": " + swapped("%s is no longer a folder (swapped since the check); refused", dir)
	m.changed[m.assertType(msg, unix.S_IFDIR, true)] = msg
	m.attachCopy(desc, fd, fd, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
	m.closeReg(fd)
	m.b.Mark(gone)
}

// maskDenied hides the deny-list entries found inside grants (at their
// paths in the new root): a folder behind an empty read-only tmpfs no one
// may enter, a file behind /dev/null on a nodev mount (opening it fails).
// Each entry is opened without following a symlink and must still be the
// file the supervisor saw (openChecked); the mask is mounted onto that
// descriptor. A path swapped meanwhile, for a symlink that would carry the
// mask elsewhere or for another file while the secret moves, refuses the
// run instead. An entry gone (or hidden by a mask above it) is skipped;
// a symlink, socket or FIFO has no content to read.
func (m *mounter) maskDenied() {
	if len(m.cfg.Masked) == 0 {
		return
	}
	null := m.null
	m.b.Store(m.statBuf, 8, num(-1))
	m.b.Load(null, m.statBuf, 8)
	m.b.Sys("open /dev/null", unix.SYS_OPENAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref("/dev/null"), imm(unix.O_PATH | unix.O_CLOEXEC)},
		initproc.Into(null), initproc.IgnoreErrors())
	for _, e := range m.cfg.Masked {
		desc := "mask " + e.Path
		m.note("mask", e.Path, "(a folder: an empty read-only tmpfs; a file: /dev/null)")
		gone, notDir, done := m.b.NewLabel(), m.b.NewLabel(), m.b.NewLabel()
		fd := m.openChecked(desc, e, gone)
		m.statField(m.tmp2, statMode, modeSize)
		m.b.And(m.tmp2, reg(m.tmp2), imm(unix.S_IFMT))
		m.b.SkipIf(initproc.Ne, reg(m.tmp2), imm(unix.S_IFDIR), notDir)
		m.mountFDTmpfs(desc, fd)
		m.b.Jump(done)
		m.b.Mark(notDir)
		m.b.SkipIf(initproc.Ne, reg(m.tmp2), imm(unix.S_IFREG), done)
		m.b.Assert(desc+": no /dev/null to mask it with", initproc.Ne, reg(null), num(-1), false)
		m.attachCopy(desc, null, fd, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
		m.b.Mark(done)
		m.closeReg(fd)
		m.b.Mark(gone)
	}
	m.closeReg(null)
}

// mountFDTmpfs mounts an empty, read-only tmpfs that no one may enter on
// the folder open on fd.
func (m *mounter) mountFDTmpfs(desc string, fd initproc.Register) {
	m.b.FdPath(reg(fd), m.fdBuf)
	m.b.Sys(desc, unix.SYS_MOUNT, []initproc.Arg{m.ref("tmpfs"), initproc.Ref(m.fdBuf), m.ref("tmpfs"),
		imm(maskFlags | unix.MS_RDONLY), m.ref("size=4k,nr_inodes=1,mode=000")})
}

// makeAliases creates, in the new root, the aliases of the config (grants
// typed through a symlink, see run's planAliases) that lie below base
// ("/" for the root tmpfs, "/tmp" for the private /tmp) and not below
// exclude: a symlink at the typed path to the resolved grant, with the
// folders above it. Every folder on the way must be a folder of base's
// own tmpfs, never a symlink (it would resolve against the host's root
// here) nor a mount (a grant: the folders would be made on the host's
// disk).
func (m *mounter) makeAliases(base string, exclude []string) {
	for _, a := range m.cfg.Aliases {
		in := base == "/" || Under(a.Path, []string{base})
		if !in || Under(a.Path, exclude) {
			continue
		}
		m.makeAlias(base, a)
	}
}

// makeAlias creates one alias (see makeAliases).
func (m *mounter) makeAlias(base string, a stageconfig.GrantAlias) {
	desc := "alias " + a.Path
	top := m.top
	m.b.Sys(desc+": lstat "+base, unix.SYS_NEWFSTATAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(m.at(base)), initproc.Ref(m.statBuf), imm(unix.AT_SYMLINK_NOFOLLOW)})
	m.statField(top, statDev, devSize)
	dir := strings.TrimSuffix(m.at(base), "/")
	rel := strings.TrimPrefix(filepath.Dir(a.Path), base)
	for _, name := range strings.Split(rel, "/") {
		if name == "" {
			continue
		}
		dir += "/" + name
		mk, next := m.b.NewLabel(), m.b.NewLabel()
		m.b.Sys(desc+": lstat "+m.unroot(dir), unix.SYS_NEWFSTATAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(dir), initproc.Ref(m.statBuf), imm(unix.AT_SYMLINK_NOFOLLOW)},
			initproc.SkipOn(unix.ENOENT, mk))
		notOurs := fmt.Sprintf("%s: %s is not a folder of the sandbox's own root", desc, m.unroot(dir))
		m.assertType(notOurs, unix.S_IFDIR, false)
		m.statField(m.tmp2, statDev, devSize)
		m.b.Assert(notOurs, initproc.Eq, reg(m.tmp2), reg(top), false)
		m.b.Jump(next)
		m.b.Mark(mk)
		m.mkdir(desc+": mkdir "+m.unroot(dir), dir, 0o755, false)
		m.b.Mark(next)
	}
	m.note("symlink", a.Path, "->", a.Target)
	m.symlink(desc, a.Target, m.at(a.Path))
}
