package stage

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/reaper"
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

// landlockABI returns the kernel's Landlock ABI version, or an error when
// Landlock is absent or disabled at boot.
func landlockABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0, fmt.Errorf("%s", landlockCause(errno))
	}
	return int(v), nil
}

// applyLandlock restricts the file system (landlock-fs), TCP (landlock-net)
// and signals and abstract unix sockets (landlock-scope) in one ruleset,
// handling every right the kernel's ABI knows (best effort: a layer the
// ABI lacks is reported missing, the others still apply):
//
//   - read and execute: /usr, /bin, /sbin, /lib*, the interpreter, the
//     skill folder;
//   - read: the parts of /etc in etcReadable and the caches of
//     sharedCaches (the lists the mount layout uses too), the files of
//     etcOwn in the sandbox's own /etc, /proc (private with the PID
//     namespace);
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
func applyLandlock(cfg *config) ([]stageconfig.Layer, []stageconfig.Missing) {
	want := func(l stageconfig.Layer) bool { return stageconfig.Has(cfg.Layers, l) }
	var applied []stageconfig.Layer
	var missing []stageconfig.Missing
	fail := func(reason string, ls ...stageconfig.Layer) {
		for _, l := range ls {
			if want(l) {
				missing = append(missing, stageconfig.Missing{Layer: l, Reason: reason})
			}
		}
	}
	all := []stageconfig.Layer{stageconfig.LayerLandlockFS, stageconfig.LayerLandlockNet, stageconfig.LayerLandlockScope}
	if !want(stageconfig.LayerLandlockFS) && !want(stageconfig.LayerLandlockNet) && !want(stageconfig.LayerLandlockScope) {
		return nil, nil
	}
	abi, err := landlockABI()
	if err != nil {
		fail(err.Error(), all...)
		return nil, missing
	}
	var attr llRulesetAttr
	if want(stageconfig.LayerLandlockFS) {
		attr.handledFS = llHandledFS(abi)
	}
	// In a private network namespace the only TCP peers are the script's
	// own, on its loopback (see setupNetNS): TCP is left to the script
	// there, so local servers work, and landlock-net is the fallback that
	// denies TCP bind and connect when there is no such namespace.
	// With a host allowlist the TCP rules stay, in the namespace too:
	// connect to the proxy's port only, no bind (see addProxyPortRule).
	if want(stageconfig.LayerLandlockNet) && (!stageconfig.Has(cfg.Namespaces, stageconfig.LayerNetNS) || cfg.ProxyPort != 0) {
		if abi >= 4 {
			attr.handledNet = llNetv4
		} else {
			fail(fmt.Sprintf("Landlock ABI %d has no TCP rules (needs 4, Linux 6.7)", abi), stageconfig.LayerLandlockNet)
		}
	}
	if want(stageconfig.LayerLandlockScope) {
		if abi >= 6 {
			attr.scoped = llScopev6
		} else {
			fail(fmt.Sprintf("Landlock ABI %d has no scopes (needs 6, Linux 6.12)", abi), stageconfig.LayerLandlockScope)
		}
	}
	if attr == (llRulesetAttr{}) {
		return nil, missing
	}
	// From here on the kernel offers what the ruleset asks for: a
	// failure leaves the layers built part-way (a granted path or a
	// sibling of a denied entry without its rule, a ruleset never
	// enforced) and refuses the run, AllowDegraded or not. The one
	// exception is landlock_restrict_self's EPERM without no_new_privs,
	// the consequence of that other layer missing (or disabled).
	broken := func(err error) ([]stageconfig.Layer, []stageconfig.Missing) {
		reported := map[stageconfig.Layer]bool{}
		for _, m := range missing {
			reported[m.Layer] = true // e.g. landlock-net on an ABI without it
		}
		for _, l := range all {
			if want(l) && !reported[l] {
				m := stageconfig.Missing{Layer: l, Reason: describe(err)}
				missing = append(missing, m)
				cfg.incomplete = append(cfg.incomplete, m)
			}
		}
		return nil, missing
	}
	// A pooled stage made the ruleset ahead with the rules on what its
	// prebuilt root holds (prebuildRules); it serves when the root is
	// the run's and the ruleset handles the same rights.
	var pre *llPrebuilt
	if cfg.pre != nil {
		pre, cfg.pre.rules = cfg.pre.rules, nil
		if pre != nil && (!cfg.pre.inUse || pre.attr != attr) {
			unix.Close(pre.fd)
			pre = nil
		}
	}
	var fd uintptr
	var rules []llRule
	if pre != nil {
		fd = uintptr(pre.fd)
	} else {
		var errno syscall.Errno
		fd, _, errno = unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
		if errno != 0 {
			return broken(fmt.Errorf("landlock_create_ruleset: %w", errno))
		}
		rules = llSharedRules(cfg.AllowNetwork, cfg.privateTmp,
			stageconfig.Has(cfg.Namespaces, stageconfig.LayerPIDNS) && reaper.IsNamespaceInit())
	}
	defer unix.Close(int(fd))
	if attr.handledFS != 0 {
		if err := addPathRules(int(fd), append(rules, llRunRules(cfg)...), attr.handledFS, "", cfg); err != nil {
			return broken(err)
		}
	}
	if attr.handledNet != 0 && cfg.ProxyPort != 0 {
		if err := addProxyPortRule(int(fd), cfg.ProxyPort); err != nil {
			return broken(err)
		}
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		err := fmt.Errorf("landlock_restrict_self: %w", errno)
		if errno == unix.EPERM && !noNewPrivs() {
			fail(describe(err)+" (no_new_privs is not set)", all...)
			return nil, missing
		}
		return broken(err)
	}
	if attr.handledFS != 0 {
		applied = append(applied, stageconfig.LayerLandlockFS)
	}
	if attr.handledNet != 0 {
		applied = append(applied, stageconfig.LayerLandlockNet)
	}
	if attr.scoped != 0 {
		applied = append(applied, stageconfig.LayerLandlockScope)
	}
	return applied, missing
}

// llRule is one Landlock path rule.
type llRule struct {
	path   string
	access uint64
}

// llSharedRules are the rules listed on applyLandlock that every run of a
// pool shares: the system folders, /etc, the devices, /dev/shm and the
// files of etcOwn (privateTmp: setupMounts built the root) and /proc
// (ownProc: the PID namespace's own).
func llSharedRules(allowNetwork, privateTmp, ownProc bool) []llRule {
	var rules []llRule
	for _, p := range llSystemDirs() {
		rules = append(rules, llRule{p, llReadExec})
	}
	for _, p := range append(etcMatches(allowNetwork), sharedCaches()...) {
		rules = append(rules, llRule{p, llRead})
	}
	for _, p := range llDevices() {
		rules = append(rules, llRule{p, llDevice})
	}
	if privateTmp {
		// The private /dev/shm of setupMounts; never the host's, which a
		// mount namespace that clone(2) created but setupMounts could not
		// build still shows.
		rules = append(rules, llRule{"/dev/shm", llReadWrite})
		// Written into the sandbox's own /etc (buildRoot); without the
		// mount namespace the path would be the host's file.
		for path := range etcOwn(allowNetwork) {
			rules = append(rules, llRule{path, llRead})
		}
	}
	for _, p := range llProcPaths(ownProc) {
		rules = append(rules, llRule{p, llRead})
	}
	return rules
}

// llRunRules are the run's own rules listed on applyLandlock: the private
// /tmp (when setupMounts built the root), the program, the skill and work
// folders and the grants.
func llRunRules(cfg *config) []llRule {
	var rules []llRule
	if cfg.privateTmp {
		// The private /tmp of setupMounts; never the host's.
		rules = append(rules, llRule{"/tmp", llReadWrite})
	}
	rules = append(rules,
		llRule{cfg.Argv[0], llReadExec},
		llRule{cfg.Skill, llReadExec},
		llRule{cfg.WorkDir, llReadWrite},
	)
	for _, g := range cfg.GrantRules {
		rules = append(rules, llRule{g.Path, grantAccess(g.Access)})
	}
	return rules
}

// addPathRules adds rules (their paths under root, resolved as if root
// were the root: see openRuleTarget; "" once in the new root), within
// handled. A missing path is skipped, but for cfg's skill
// and work folders (cfg is nil for a pooled stage's shared rules).
func addPathRules(ruleset int, rules []llRule, handled uint64, root string, cfg *config) error {
	rootFD := unix.AT_FDCWD
	if root != "" {
		fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("landlock rules in %s: %w", root, err)
		}
		defer unix.Close(fd)
		rootFD = fd
	}
	for _, r := range rules {
		if err := addPathRule(ruleset, rootFD, r.path, r.access&handled); err != nil {
			if os.IsNotExist(err) && (cfg == nil || r.path != cfg.Skill && r.path != cfg.WorkDir) {
				continue
			}
			return fmt.Errorf("landlock rule for %s: %w", r.path, err)
		}
	}
	return nil
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

// llPrebuilt is a Landlock ruleset a pooled stage made ahead, holding the
// shared rules (llSharedRules) on the files of its prebuilt root.
type llPrebuilt struct {
	fd   int
	attr llRulesetAttr
}

// prebuildRules makes a pooled stage's ruleset ahead, as applyLandlock
// would for a run of shape with every Landlock layer and no host
// allowlist, and adds the shared rules on the files of the root built on
// root. Landlock rules hold on files, not paths: those files are the
// run's once root becomes its root. nil when Landlock is missing or a
// rule fails: applyLandlock then makes the ruleset itself.
func prebuildRules(root string, shape stageconfig.Prebuild) *llPrebuilt {
	abi, err := landlockABI()
	if err != nil {
		return nil
	}
	attr := llRulesetAttr{handledFS: llHandledFS(abi)}
	if !shape.NetNS && abi >= 4 {
		attr.handledNet = llNetv4
	}
	if abi >= 6 {
		attr.scoped = llScopev6
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return nil
	}
	if err := addPathRules(int(fd), llSharedRules(shape.Network, true, reaper.IsNamespaceInit()), attr.handledFS, root, nil); err != nil {
		unix.Close(int(fd))
		return nil
	}
	hi, err := raiseFD(int(fd))
	if err != nil {
		unix.Close(int(fd))
		return nil
	}
	return &llPrebuilt{fd: hi, attr: attr}
}

// addPathRule allows access beneath path (or to path, for a file), path
// as openRuleTarget finds it.
func addPathRule(ruleset, rootFD int, path string, access uint64) error {
	fd, err := openRuleTarget(rootFD, path)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= llFileRights
	}
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// openRuleTarget opens path, following symlinks, for a rule: in this
// process's root when rootFD is AT_FDCWD, else in the tree open on rootFD
// as if it were the root (openat2 RESOLVE_IN_ROOT). A pooled stage adds
// its rules before its prebuilt root is the root (prebuildRules): an
// absolute symlink there (an /etc link re-created as it is, dangling in
// the sandbox) must resolve as it will for the run, not against the
// host's tree, where the rule would land on a host file that a stage of
// its own finds missing and skips.
func openRuleTarget(rootFD int, path string) (int, error) {
	if rootFD == unix.AT_FDCWD {
		return unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	return unix.Openat2(rootFD, strings.TrimPrefix(path, "/"), &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// Paths the script may read (and execute, for the system folders). /etc is
// not among them as a whole: /etc/passwd, group, shadow, hostname and the
// like describe the host. Missing paths are skipped.

// llSystemDirs are read and executed: the system's programs and libraries.
func llSystemDirs() []string { return stageconfig.SystemDirs() }

// llDevices are read and written: harmless character devices.
func llDevices() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}
}

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
