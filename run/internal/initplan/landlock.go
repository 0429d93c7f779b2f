//go:build linux && (amd64 || arm64)

package initplan

import (
	"fmt"
	"maps"
	"slices"
	"syscall"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// Landlock access rights by the ABI version that introduced them.
const (
	llFSv1 = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	llFSv2  = llFSv1 | unix.LANDLOCK_ACCESS_FS_REFER
	llFSv3  = llFSv2 | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	llFSv5  = llFSv3 | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	llNetv4 = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	// Scopes (ABI 6): abstract unix sockets and signals of processes
	// outside the sandbox's Landlock domain.
	llScopeAbstractUnix = 0x1
	llScopeSignal       = 0x2
	llScopev6           = llScopeAbstractUnix | llScopeSignal

	// Rights that apply to files (rules on files may hold only these).
	llFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE |
		unix.LANDLOCK_ACCESS_FS_IOCTL_DEV

	llRead      = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	llReadExec  = llRead | unix.LANDLOCK_ACCESS_FS_EXECUTE
	llDevice    = unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	llReadWrite = llFSv5 &^ (unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV)
)

// llRulesetAttr is struct landlock_ruleset_attr up to ABI 6. Larger than
// what old kernels know is fine as long as the extra fields are zero.
type llRulesetAttr struct {
	handledFS  uint64
	handledNet uint64
	scoped     uint64
}

// landlockABI returns the kernel's Landlock ABI version, or 0 and why
// Landlock is absent or disabled at boot.
func landlockABI() (int, string) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, landlockCause(errno)
	}
	return int(v), ""
}

// applyLandlock restricts the file system (landlock-fs), TCP (landlock-net)
// and signals and abstract unix sockets (landlock-scope) in one ruleset,
// handling every right the kernel's ABI knows (best effort: a layer the
// ABI lacks is reported missing, the others still apply):
//
//   - read and execute: /usr, /bin, /sbin, /lib*, the interpreter, the
//     skill folder;
//   - read: the caches of sharedCaches, /proc (private with the PID
//     namespace), and /etc: with the mount namespace the sandbox's /etc
//     (the host's by a rule, see buildEtc) as a whole, or each of its
//     entries but those that hold a part of the run (llOwnEtcRules), and
//     the files of etcLinkTargets; without it each part of etcReadable in
//     the host's /etc;
//   - read and write: /dev/null, zero, full, random, urandom, and the
//     private /dev/shm and /tmp when the mount namespace provides them;
//   - everything but execute and device nodes: the work folder;
//   - TCP bind and connect: nothing, unless AllowNetwork or a private
//     network namespace (then not handled: its loopback is the script's);
//     with a host allowlist, connect to the proxy's port only and no bind,
//     in the namespace too;
//   - scopes: no signal and no abstract unix socket leaves the domain.
//
// ABI 7 added only logging; rights of later ABIs (UDP, connecting to
// pathname unix sockets) are not handled yet, so on such kernels the
// ruleset is the ABI 6 one. Pathname unix sockets are kept out of reach by
// the mount namespace, whose root holds no host folder that could hold one.
//
// The rules are added once the mount namespace is built: they hold on the
// files the paths lead to in the sandbox's root.
func (c *compiler) applyLandlock() {
	cfg := c.cfg
	if !c.wantsLandlock(stageconfig.LayerLandlockFS) && !c.wantsLandlock(stageconfig.LayerLandlockNet) && !c.wantsLandlock(stageconfig.LayerLandlockScope) {
		c.dropPrefixRuleset()
		return
	}
	abi := c.pf.landlockABI
	if abi == 0 {
		c.landlockMissing(c.pf.landlockWhy, stageconfig.LayerLandlockFS, stageconfig.LayerLandlockNet, stageconfig.LayerLandlockScope)
		return
	}
	attr, layers := c.landlockHandled(abi)
	if attr == (llRulesetAttr{}) {
		c.dropPrefixRuleset()
		return
	}
	// From here on the kernel offers what the ruleset asks for: a
	// failure leaves the layers built part-way (a granted path or a
	// sibling of a denied entry without its rule, a ruleset never
	// enforced) and refuses the run, AllowDegraded or not. The one
	// exception is landlock_restrict_self's EPERM without no_new_privs,
	// the consequence of that other layer missing (or disabled).
	c.b.Begin(layers)
	c.noteLayer = "landlock"
	ruleset := regRuleset
	// A pooled prefix made the ruleset ahead with the rules on what its
	// root holds: it serves when that root is the run's and the ruleset
	// handles the same rights. Its rules grant /etc as a whole, which
	// etcOnlyOurs allows for every run prebuiltFits takes (it puts
	// nothing of the run's in /etc); checked again here.
	pre := c.in.Prefix
	wholeEtc := etcOnlyOurs(cfg)
	prebuilt := pre != nil && pre.ruleset != nil && c.prebuiltRoot && *pre.ruleset == attr && wholeEtc
	if c.listing {
		c.note("landlock ruleset for", layersWord(layers)+":", rulesetWords(attr))
	}
	if !prebuilt {
		c.dropPrefixRuleset()
		ad := initproc.Struct(c.b, &attr)
		c.b.Sys("landlock_create_ruleset", unix.SYS_LANDLOCK_CREATE_RULESET, []initproc.Arg{initproc.Ref(ad), imm(uint64(unsafe.Sizeof(attr))), imm(0)},
			initproc.Into(ruleset))
	}
	if attr.handledFS != 0 {
		c.landlockFSRules(ruleset, attr.handledFS, prebuilt, wholeEtc)
	}
	if attr.handledNet != 0 && cfg.ProxyPort != 0 {
		// The proxy's port and the local ports' relays: their
		// listeners are the only ones in the namespace.
		for i, port := range append([]int{cfg.ProxyPort}, cfg.LocalPorts...) {
			pa := llNetPortAttr{allowedAccess: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(port)}
			pd := initproc.Struct(c.b, &pa)
			if c.listing {
				c.notef("landlock connect tcp/%d", port)
			}
			what := "landlock rule for the proxy port"
			if i > 0 {
				what = fmt.Sprintf("landlock rule for local port %d", port)
			}
			c.b.Sys(what, unix.SYS_LANDLOCK_ADD_RULE, []initproc.Arg{reg(ruleset), imm(llRuleNetPort), initproc.Ref(pd), imm(0)})
		}
	}
	c.b.Sys("landlock_restrict_self", unix.SYS_LANDLOCK_RESTRICT_SELF, []initproc.Arg{reg(ruleset), imm(0)},
		initproc.UnavailableUnless(bit(stageconfig.LayerNoNewPrivs), unix.EPERM))
	c.note("landlock enforce")
	c.closeReg(ruleset)
	c.noteLayer = ""
	c.b.End()
}

// wantsLandlock reports whether the config asks for the Landlock layer l.
func (c *compiler) wantsLandlock(l stageconfig.Layer) bool { return stageconfig.Has(c.cfg.Layers, l) }

// landlockMissing records the layers of ls the config asks for as
// missing, for reason.
func (c *compiler) landlockMissing(reason string, ls ...stageconfig.Layer) {
	for _, l := range ls {
		if c.wantsLandlock(l) {
			c.missing = append(c.missing, stageconfig.Missing{Layer: l, Reason: reason})
		}
	}
}

// landlockHandled is the ruleset applyLandlock makes on Landlock ABI abi
// and the layers it builds; the layers asked for that the ABI lacks are
// recorded missing.
func (c *compiler) landlockHandled(abi int) (llRulesetAttr, uint32) {
	cfg := c.cfg
	var attr llRulesetAttr
	var layers uint32
	if c.wantsLandlock(stageconfig.LayerLandlockFS) {
		attr.handledFS = llHandledFS(abi)
		layers |= bit(stageconfig.LayerLandlockFS)
	}
	// In a private network namespace the only TCP peers are the script's
	// own, on its loopback (see setupNetNS): TCP is left to the script
	// there, so local servers work, and landlock-net is the fallback that
	// denies TCP bind and connect when there is no such namespace.
	// With a host allowlist the TCP rules stay, in the namespace too:
	// connect to the proxy's port only, no bind.
	if c.wantsLandlock(stageconfig.LayerLandlockNet) && (!stageconfig.Has(cfg.Namespaces, stageconfig.LayerNetNS) || cfg.ProxyPort != 0) {
		if abi >= 4 {
			attr.handledNet = llNetv4
			layers |= bit(stageconfig.LayerLandlockNet)
		} else {
			c.landlockMissing(fmt.Sprintf("Landlock ABI %d has no TCP rules (needs 4, Linux 6.7)", abi), stageconfig.LayerLandlockNet)
		}
	}
	if c.wantsLandlock(stageconfig.LayerLandlockScope) {
		if abi >= 6 {
			attr.scoped = llScopev6
			layers |= bit(stageconfig.LayerLandlockScope)
		} else {
			c.landlockMissing(fmt.Sprintf("Landlock ABI %d has no scopes (needs 6, Linux 6.12)", abi), stageconfig.LayerLandlockScope)
		}
	}
	return attr, layers
}

// landlockFSRules adds the file system rules (within handled) to the
// ruleset in register ruleset: those a pooled prefix added already are
// left out when it is prebuilt; wholeEtc is llOwnEtcRules'.
func (c *compiler) landlockFSRules(ruleset initproc.Register, handled uint64, prebuilt, wholeEtc bool) {
	mountNS := bit(stageconfig.LayerMountNS)
	ownProc := stageconfig.Has(c.cfg.Namespaces, stageconfig.LayerPIDNS)
	if !prebuilt {
		for _, r := range llSharedRules(ownProc) {
			c.landlockRule(ruleset, r, handled)
		}
	}
	// Only in the private root setupMounts built: without the
	// mount namespace these paths would be the host's, and /etc's
	// entries are granted one by one instead.
	hostEtc, done := c.b.NewLabel(), c.b.NewLabel()
	c.b.SkipUnlessApplied(mountNS, hostEtc)
	private := []llRule{{path: "/tmp", access: llReadWrite}}
	if !prebuilt {
		private = append(private, llPrivateSharedRules(c.llOwnEtcRules(wholeEtc))...)
	}
	c.when("mountns applied", func() {
		for _, r := range private {
			c.landlockRule(ruleset, r, handled)
		}
	})
	c.b.Jump(done)
	c.b.Mark(hostEtc)
	if !prebuilt { // a prebuilt root is a mount namespace's
		c.when("mountns not applied", func() {
			for _, r := range llEtcEntryRules(c.etc) {
				c.landlockRule(ruleset, r, handled)
			}
		})
	}
	c.b.Mark(done)
	for _, r := range llRunRules(c.cfg) {
		c.landlockRule(ruleset, r, handled)
	}
}

// dropPrefixRuleset closes the ruleset a pooled prefix made, when the run
// does not use it.
func (c *compiler) dropPrefixRuleset() {
	if pre := c.in.Prefix; pre != nil && pre.ruleset != nil {
		c.closeReg(regRuleset)
	}
}

// landlockRule emits r's rule (within handled). A missing path is skipped,
// but for the skill and work folders.
func (c *compiler) landlockRule(ruleset initproc.Register, r llRule, handled uint64) {
	access := r.access & handled
	optional := r.path != c.cfg.Skill && r.path != c.cfg.WorkDir
	c.hostSteps(r.host, func() { c.note("landlock", accessWord(r.access), r.path) })
	c.b.LandlockRule("landlock rule for "+r.path, num(unix.AT_FDCWD), false, c.b.String(r.path), reg(ruleset), access, access&llFileRights, optional)
}

// llRule is one Landlock path rule.
type llRule struct {
	path   string
	access uint64
	// host names the host's files the rule comes from, for the listing
	// (see step.host); "" for a rule of the config.
	host string
}

// llSharedRules are the rules listed on applyLandlock that do not depend
// on the run: the system folders, the shared caches, the devices and /proc
// (ownProc: the PID namespace's own). /etc's come from llPrivateSharedRules
// or llEtcEntryRules.
func llSharedRules(ownProc bool) []llRule {
	var rules []llRule
	for _, p := range llSystemDirs() {
		rules = append(rules, llRule{path: p, access: llReadExec})
	}
	for _, p := range sharedCaches() {
		rules = append(rules, llRule{path: p, access: llRead})
	}
	for _, p := range llDevices() {
		rules = append(rules, llRule{path: p, access: llDevice})
	}
	for _, p := range llProcPaths(ownProc) {
		rules = append(rules, llRule{path: p, access: llRead})
	}
	return rules
}

// llPrivateSharedRules are the rules on what setupMounts made private for
// every run (the private /tmp is the run's): /dev/shm, and etc, the rules
// on the sandbox's /etc (llOwnEtcRules).
func llPrivateSharedRules(etc []llRule) []llRule {
	return append([]llRule{{path: "/dev/shm", access: llReadWrite}}, etc...)
}

// llOwnEtcRules are the rules on the sandbox's /etc (buildEtc) and on the
// files its links lead to (etcTargets). With wholeEtc the folder is
// granted as a whole, one rule (each rule is three system calls in the
// init process, on every start): what the script's identity may not read
// there the kernel refuses, and the deny list's entries are masks. Only
// where nothing of the run's lies there (etcOnlyOurs): a read rule on /etc
// would override a grant's narrower rules below it. Otherwise each entry
// of the host's /etc gets its own rule, but those that are or hold a part
// of the run (runPaths), which get only the run's own rules: one may then
// reach the part through them but not list them.
func (c *compiler) llOwnEtcRules(wholeEtc bool) []llRule {
	var rules []llRule
	if wholeEtc {
		rules = append(rules, llRule{path: "/etc", access: llRead})
	} else {
		run := runPaths(c.cfg)
		for _, n := range slices.Sorted(maps.Keys(c.etcListed)) {
			if p := "/etc/" + n; !holdsAny(p, run) {
				rules = append(rules, llRule{path: p, access: llRead, host: "/etc entries"})
			}
		}
	}
	for _, t := range c.etcTargets {
		rules = append(rules, llRule{path: t, access: llRead, host: "/etc link targets"})
	}
	return rules
}

// llEtcEntryRules grant the entries etc (etcMatches) of /etc one by one:
// the host's /etc where the run has no root of its own (no mount
// namespace), which holds secrets and facts about the host.
func llEtcEntryRules(etc []string) []llRule {
	rules := make([]llRule, 0, len(etc))
	for _, p := range etc {
		rules = append(rules, llRule{path: p, access: llRead, host: "/etc entries"})
	}
	return rules
}

// etcOnlyOurs reports whether no part of the run (skill, work and working
// folders, grants, their read-only parts, masks, rules and aliases) lies
// in /etc, at it or above it: then the sandbox's /etc holds only what
// buildRoot put there. A read grant that holds a deny-list entry is
// spelled out in narrower rules (list-only on its folder, read on each
// sibling present when the run was planned), which a read rule on /etc
// would override for files created there later.
func etcOnlyOurs(cfg *stageconfig.Config) bool {
	for _, p := range runPaths(cfg) {
		if p == "/" || underEtc(p) {
			return false
		}
	}
	return true
}

// runPaths are the paths of the run's parts: the skill, work and working
// folders, grants, their read-only parts, masks, rules and aliases (both
// ends).
func runPaths(cfg *stageconfig.Config) []string {
	paths := []string{cfg.Skill, cfg.WorkDir, cfg.Dir}
	for _, gs := range [][]stageconfig.GrantMount{cfg.Grants, cfg.ReadOnly, cfg.Masked} {
		for _, g := range gs {
			paths = append(paths, g.Path)
		}
	}
	for _, r := range cfg.GrantRules {
		paths = append(paths, r.Path)
	}
	for _, a := range cfg.Aliases {
		paths = append(paths, a.Path, a.Target)
	}
	return paths
}

// llRunRules are the run's own rules listed on applyLandlock: the
// program, the skill and work folders and the grants.
func llRunRules(cfg *stageconfig.Config) []llRule {
	rules := []llRule{
		{path: cfg.Argv[0], access: llReadExec},
		{path: cfg.Skill, access: llReadExec},
		{path: cfg.WorkDir, access: llReadWrite},
	}
	for _, g := range cfg.GrantRules {
		rules = append(rules, llRule{path: g.Path, access: grantAccess(g.Access)})
	}
	return rules
}

// grantAccess maps a grant rule's access to Landlock rights.
func grantAccess(access string) uint64 {
	switch access {
	case "rw":
		return llReadWrite
	case "rx":
		return llReadExec
	case "r":
		return llRead
	}
	return unix.LANDLOCK_ACCESS_FS_READ_DIR
}

// llHandledFS is the file system rights Landlock ABI abi knows.
func llHandledFS(abi int) uint64 {
	switch {
	case abi >= 5:
		return llFSv5
	case abi >= 3:
		return llFSv3
	case abi >= 2:
		return llFSv2
	}
	return llFSv1
}

// llProcPaths are read. With a PID namespace /proc is the run's own and is
// granted whole. Without one it is the host's, and /proc/PID/cmdline,
// environ (where permissions allow), status and the like of every host
// process would be readable: then only the script's own folder is granted
// (/proc/self is resolved in the init process, which the script replaces
// by execve under the same pid) with the system-wide files that runtimes
// read (CPU and memory figures, kernel settings). Processes the script
// starts cannot read their own /proc/PID in that mode.
func llProcPaths(ownPIDNS bool) []string {
	if ownPIDNS {
		return []string{"/proc"}
	}
	return []string{
		"/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/proc/stat", "/proc/uptime",
		"/proc/loadavg", "/proc/version", "/proc/filesystems", "/proc/sys/kernel", "/proc/sys/vm",
	}
}

// llNetPortAttr is struct landlock_net_port_attr.
type llNetPortAttr struct {
	allowedAccess uint64
	port          uint64
}

// llRuleNetPort is LANDLOCK_RULE_NET_PORT.
const llRuleNetPort = 2

// landlockCause explains a failed landlock_create_ruleset version query.
func landlockCause(errno syscall.Errno) string {
	switch errno {
	case unix.ENOSYS:
		return "the kernel has no Landlock (needs Linux 5.13+ built with CONFIG_SECURITY_LANDLOCK; landlock_create_ruleset failed with ENOSYS); fix: a newer kernel"
	case unix.EOPNOTSUPP:
		return "Landlock is built into the kernel but not enabled at boot (EOPNOTSUPP); fix: add landlock to the lsm= kernel parameter, e.g. lsm=landlock,lockdown,yama,integrity,apparmor"
	}
	return fmt.Sprintf("landlock unavailable: landlock_create_ruleset failed with %s (%v)", unix.ErrnoName(errno), errno)
}
