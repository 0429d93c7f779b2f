//go:build linux && (amd64 || arm64)

package initplan

import (
	"errors"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// Registers every program uses for the same thing, so that a run's
// program finds what a pooled prefix left in them.
const (
	regOOM     initproc.Register = 1 // the init process's oom_score_adj (see openOOMScore)
	regBase    initproc.Register = 2 // the root's host folder (see mounter)
	regRuleset initproc.Register = 3 // the Landlock ruleset
	regQuotas  initproc.Register = 4 // 1 once a prefix set the quotas (see prefixQuotas)
	firstFree  initproc.Register = 5 // the rest are each program's own
)

// PoolShape is what every run of a pool shares, which its init processes
// build ahead (see CompilePrefix).
type PoolShape struct {
	// Namespaces are those the init processes are cloned into.
	Namespaces   []stageconfig.Layer
	AllowNetwork bool
	// RootCaller, HostUID and HostGID are Input's.
	RootCaller       bool
	HostUID, HostGID int
}

// Prefix is what a pooled init process runs while it waits for a run, and
// what that built, which the run's program then uses (Input.Prefix).
type Prefix struct {
	prog  *initproc.Program
	shape PoolShape
	// quotas: the prefix tried to set the quotas, regQuotas says
	// whether it did (prefixQuotas).
	quotas bool
	// oom: regOOM holds the oom_score_adj descriptor; loopback: the
	// network namespace's loopback is up; root: the root is built on
	// rootBase, regBase holding its host folder's descriptor, writable
	// and not yet entered; ruleset: regRuleset holds a Landlock ruleset
	// of these rights with the rules on the root's shared parts.
	oom, loopback, root bool
	rootBase            string
	ruleset             *llRulesetAttr
}

// Bytes is the prefix as sent to the init process.
func (p *Prefix) Bytes() []byte { return p.prog.Bytes }

// CompilePrefix compiles what a pooled init process of shape does ahead
// of its run, everything every run of the pool shares: its oom_score_adj
// opened and its identity taken; the loopback up (with a network
// namespace); with a mount namespace the root on /tmp with the system
// folders, /etc, /dev, /proc and /dev/shm, everything read-only but the
// root's own tmpfs, which the run's mount points still go into; with a
// PID namespace too, the Landlock ruleset with the rules on all of these.
// Then it waits for its run (initproc's AwaitRun). A failure ends the init
// process: the pool finds it dead and starts another.
func CompilePrefix(shape PoolShape) (*Prefix, error) {
	cfg := &stageconfig.Config{
		Namespaces:   shape.Namespaces,
		AllowNetwork: shape.AllowNetwork,
		Layers:       []stageconfig.Layer{stageconfig.LayerLandlockFS, stageconfig.LayerLandlockNet, stageconfig.LayerLandlockScope},
	}
	c := newCompiler(Input{Config: cfg, RootCaller: shape.RootCaller, HostUID: shape.HostUID, HostGID: shape.HostGID})
	pre := &Prefix{shape: shape}
	if c.pidNS() {
		c.openOOMScore()
		pre.oom = true
	}
	c.notDumpable()
	c.credentials()
	pre.quotas = c.prefixQuotas()
	if stageconfig.Has(cfg.Namespaces, stageconfig.LayerNetNS) {
		c.loopbackUp()
		pre.loopback = true
	}
	if base := rootBase(cfg); stageconfig.Has(cfg.Namespaces, stageconfig.LayerMountNS) && base == "/tmp" {
		m := c.newMounter()
		m.mount("make / private", "", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
		m.openBase()
		m.mount("root tmpfs on "+m.root, "tmpfs", m.root, "tmpfs", maskFlags, rootOptions)
		m.folders()
		var bound []string
		for _, e := range systemEntries() {
			m.place(e, true, &bound)
		}
		m.etcAndDev(bound)
		// Everything read-only and nosuid, then the root's tmpfs alone
		// writable again for the run's mount points.
		m.mountSetattr("mount_setattr "+m.root, 0, m.root, unix.AT_RECURSIVE, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID)
		m.mountClear("mount_setattr "+m.root, m.root, unix.MOUNT_ATTR_RDONLY)
		m.mountProc()
		m.mountShm()
		pre.root, pre.rootBase = true, base
		// Without a PID namespace the rules on /proc would be on this
		// process's own folder, which is not the script's.
		if c.pidNS() && c.pf.landlockABI > 0 {
			pre.ruleset = c.prebuildRules(m.root)
		}
	}
	// The run's descriptors come at stageconfig.FirstTreeFD and on (see
	// initproc's childReceive): what the prefix keeps moves above them.
	for _, r := range []struct {
		keep bool
		reg  initproc.Register
	}{{pre.oom, regOOM}, {pre.root, regBase}, {pre.ruleset != nil, regRuleset}} {
		if r.keep {
			c.raise(r.reg)
		}
	}
	c.b.AwaitRun()
	prog, err := c.b.Finish()
	if err != nil {
		return nil, err
	}
	pre.prog = prog
	return pre, nil
}

// raise moves the descriptor in r above the slots of the run's
// descriptors (stageconfig.FirstTreeFD + MaxPassedFDs), close-on-exec.
func (c *compiler) raise(r initproc.Register) {
	c.b.Sys("move a descriptor", unix.SYS_FCNTL, []initproc.Arg{reg(r), imm(unix.F_DUPFD_CLOEXEC), imm(stageconfig.FirstTreeFD + stageconfig.MaxPassedFDs)},
		initproc.Into(c.tmp))
	c.closeReg(r)
	c.b.Or(r, reg(c.tmp), imm(0))
}

// mountClear clears the mount attributes clr of the mount at path alone.
func (m *mounter) mountClear(desc, path string, clr uint64) {
	attr := unix.MountAttr{Attr_clr: clr}
	d := initproc.Struct(m.b, &attr)
	m.b.Sys(desc, unix.SYS_MOUNT_SETATTR, []initproc.Arg{num(unix.AT_FDCWD), m.ref(path), imm(0), initproc.Ref(d), imm(uint64(unsafe.Sizeof(attr)))})
}

// prebuildRules makes the pool's Landlock ruleset ahead, as applyLandlock
// would for a run of the pool's shape with every Landlock layer and no
// host allowlist, with the rules on the root built on root: its system
// folders, /etc, devices, /proc and the private /dev/shm and /etc files.
// Landlock rules hold on files, not paths: those files are the run's once
// root becomes its root. The paths resolve in root as if it were the root
// (openat2 RESOLVE_IN_ROOT): an absolute symlink in it (an /etc link
// re-created as it is) must lead where it will for the run, not into the
// host's tree.
func (c *compiler) prebuildRules(root string) *llRulesetAttr {
	abi := c.pf.landlockABI
	attr := llRulesetAttr{handledFS: llHandledFS(abi)}
	if !stageconfig.Has(c.cfg.Namespaces, stageconfig.LayerNetNS) && abi >= 4 {
		attr.handledNet = llNetv4
	}
	if abi >= 6 {
		attr.scoped = llScopev6
	}
	ad := initproc.Struct(c.b, &attr)
	c.b.Sys("landlock_create_ruleset", unix.SYS_LANDLOCK_CREATE_RULESET, []initproc.Arg{initproc.Ref(ad), imm(uint64(unsafe.Sizeof(attr))), imm(0)},
		initproc.Into(regRuleset))
	rootFD := c.fd
	c.b.Sys("open "+root, unix.SYS_OPENAT, []initproc.Arg{num(unix.AT_FDCWD), c.ref(root), imm(unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC)}, initproc.Into(rootFD))
	for _, r := range append(llSharedRules(true), llPrivateSharedRules(c.llOwnEtcRules(true))...) {
		access := r.access & attr.handledFS
		c.b.LandlockRule("landlock rule for "+r.path, reg(rootFD), true, c.b.String(r.path), reg(regRuleset), access, access&llFileRights, true)
	}
	c.closeReg(rootFD)
	return &attr
}

// prebuiltFits reports whether the root a pooled prefix built is the one
// setupMounts would build for the run, so far as it goes: the same /etc
// (AllowNetwork) and /proc (the PID namespace), and no mount point of the
// run inside what the prefix put in /etc or /dev (made there, it would be
// made through them).
func (m *mounter) prebuiltFits() bool {
	pre := m.in.Prefix
	if pre.shape.AllowNetwork != m.cfg.AllowNetwork || stageconfig.Has(pre.shape.Namespaces, stageconfig.LayerPIDNS) != m.pidNS() {
		return false
	}
	// The prefix's /etc masks knew nothing of the run (see etcMasks).
	if !etcOnlyOurs(m.cfg) {
		return false
	}
	for _, mt := range m.outsideMountPoints(systemEntries()) {
		if Under(mt.path, []string{"/etc", "/dev"}) {
			return false
		}
	}
	return true
}

// prebuiltRunParts is setupMounts on a root a pooled prefix built: the
// run's mount points in the root's tmpfs, which then becomes read-only,
// the run's parts (mountRunParts), and the root entered.
func (m *mounter) prebuiltRunParts() {
	m.prebuiltRoot = true
	m.runMountPoints(systemEntries())
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	d := initproc.Struct(m.b, &attr)
	m.b.Sys("mount_setattr "+m.root, unix.SYS_MOUNT_SETATTR, []initproc.Arg{num(unix.AT_FDCWD), m.ref(m.root), imm(0), initproc.Ref(d), imm(uint64(unsafe.Sizeof(attr)))})
	m.mountRunParts()
	m.closeReg(m.base)
	m.enterRoot()
}

// discardPrebuilt undoes a pooled prefix's root that does not fit the
// run: its tmpfs (and everything mounted in it) is detached, which
// uncovers the host's folder, and its folder's descriptor closed; "/"
// stays private. The ruleset with rules on that root goes too (see
// applyLandlock).
func (m *mounter) discardPrebuilt() {
	m.b.Sys("detach the prebuilt root", unix.SYS_UMOUNT2, []initproc.Arg{m.ref(m.root), imm(unix.MNT_DETACH)})
	m.closeReg(m.base)
	m.prefixDiscarded = true
}

// errNoPrefix is Compile's error for a prefix of another pool's shape.
var errNoPrefix = errors.New("the pooled init process's prefix does not fit its run")
