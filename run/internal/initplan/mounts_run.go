//go:build linux && (amd64 || arm64)

package initplan

import (
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// makeHostWorkDir makes the work folder on the host when the mount
// namespace's layer is not applied (see Input.MakeWorkDir), as the init
// process's identity: the run then uses the host's folder (its Landlock
// rule, its working folder). mkdir fails on anything already there.
func (c *compiler) makeHostWorkDir() {
	made := c.b.NewLabel()
	c.when("mountns not applied", func() { c.note("mkdir", c.cfg.WorkDir, "(the work folder, on the host)") })
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
	if m.listing {
		m.note("tmpfs /tmp", tmpfsOptions(tmpMB, "1777"), "(nosuid,nodev,noexec)")
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
		m.note("mkdir", cfg.WorkDir, "(the work folder, in /tmp's tmpfs)")
		m.mkdirAll("work folder "+cfg.WorkDir, m.root, m.at(cfg.WorkDir), 0o700)
	case cfg.WorkDirMB > 0:
		// A size-capped work folder: a full disk is not the script's to
		// cause. Its mount point was made with the root (see
		// outsideMountPoints).
		if m.listing {
			m.note("tmpfs", cfg.WorkDir, tmpfsOptions(cfg.WorkDirMB, "0700"), "(the work folder; nosuid,nodev,noexec)")
		}
		m.mount("work folder tmpfs", "tmpfs", m.at(cfg.WorkDir), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, tmpfsOptions(cfg.WorkDirMB, "0700"))
	default:
		// A kept work folder, on the host's disk: as the tmpfs would
		// be, nosuid, nodev and noexec, so that a program the script
		// writes there cannot run where Landlock is missing.
		m.rebind("work folder "+cfg.WorkDir, cfg.WorkDir)
		m.note("nosuid,nodev,noexec", cfg.WorkDir, "(recursive)")
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
	m.note("read-only", cfg.Skill)
	m.b.Remount(fmt.Sprintf("remount (flags %#x) %s", unix.MS_RDONLY, cfg.Skill), m.b.String(m.at(cfg.Skill)), unix.MS_RDONLY)
	m.machineView()
}

// rebind bind-mounts the host folder path onto itself in the new root,
// creating the mount point (in the private /tmp) first when it is
// missing. The folder is bound alone, as grants are: planning refused a
// skill folder holding mounts (grants.CheckSkillMounts), and a mount made
// below it since is locked here, which makes the bind fail (EINVAL) and
// refuses the run rather than carry it in.
func (m *mounter) rebind(desc, path string) {
	m.note("bind", path, path, "(alone)")
	fd := m.fd
	m.hostOpen(desc+": open", path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, fd)
	m.mkdirAll(desc, m.root, m.at(path), 0o755)
	m.mountFD(desc+": bind (alone: a mount made below it since planning fails it)", fd, m.at(path), unix.MS_BIND)
	m.closeReg(fd)
}

// attachTree attaches the supervisor's tree, a detached copy of a host
// mount on the init process's descriptor tree, at path, and makes it and
// every mount below it private. The copy is a peer of the host's mount
// when that one is shared (systemd makes "/" shared), and every mount
// made inside it afterwards (the masks of maskDenied, anything mounted on
// a grant) would then be made in the host's mount namespace too, and
// outlive the run. (The supervisor makes each tree private before it hands
// it over, grants.MakePrivate, which closes the moment between the attach
// and this; before Linux 5.12 it cannot.)
func (m *mounter) attachTree(desc string, tree int, path string) {
	m.note("attach the supervisor's copy of", path, "at", path, "(private)")
	m.b.Sys(desc+": move_mount", unix.SYS_MOVE_MOUNT, []initproc.Arg{num(tree), m.ref(""), num(unix.AT_FDCWD), m.ref(path), imm(unix.MOVE_MOUNT_F_EMPTY_PATH)})
	m.mount(desc+": make private", "", path, "", unix.MS_REC|unix.MS_PRIVATE, "")
	m.b.Sys("close", unix.SYS_CLOSE, []initproc.Arg{num(tree)}, initproc.IgnoreErrors())
}

// tmpfsOptions are those of a size-capped tmpfs of sizeMB MiB (with 64
// inodes per MiB, at least 1024) and the given octal mode.
func tmpfsOptions(sizeMB int, mode string) string {
	return fmt.Sprintf("size=%dm,nr_inodes=%d,mode=%s", sizeMB, max(sizeMB*64, 1024), mode)
}
