package run

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// handOver lets a sandbox that runs as another identity than the caller
// (a root caller, see nobodyUID) reach the skill folder and the grants
// without anyone changing their permissions. For each path, the
// supervisor, which can reach it, makes a detached copy of its mount
// (open_tree(2) with OPEN_TREE_CLONE); the init process attaches each copy
// at its own path in the sandbox's mount namespace (move_mount(2)): the
// folders above it, such as a 0700 `mktemp -d` folder or /root, are then
// never traversed. Read-only copies (the skill folder, read grants) are
// also id-mapped so that files owned by root appear owned by the sandbox
// identity (mount_setattr(2) with MOUNT_ATTR_IDMAP). A write grant is
// id-mapped the same way when it belongs to the caller (root): the
// script then edits root's files in place and what it creates belongs
// to root on the host. What such a file could carry that gives power
// later (a set-id bit, a file capability, a device node) is stopped by
// other layers (see docs/grants.md, "Outputs of a root caller"). A write
// grant of another owner (uid 65534, as made before) is handed over as
// it is and must be writable by the sandbox identity.
//
// The skill folder is handed over only with skillToo (when the sandbox
// identity cannot reach it otherwise). It returns the files to pass to
// the init process (their descriptors are recorded in cfg), or nil when the
// caller is the sandbox identity or cannot clone mounts. When a read-only
// copy cannot be id-mapped, the path itself must be accessible to the
// sandbox identity; the error then names it.
func handOver(uid, gid int, cfg *stageconfig.Config, skillToo bool) ([]*os.File, error) {
	if uid == os.Geteuid() || os.Geteuid() != 0 || (!skillToo && len(cfg.Grants) == 0) {
		return nil, nil
	}
	userns, err := initproc.UserNS(uid, gid)
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
			for k := range cfg.Grants[j].Below {
				cfg.Grants[j].Below[k].Tree = 0
			}
		}
		if errors.Is(err, ErrBadConfig) {
			return nil, err
		}
		return nil, nil
	}
	clone := func(path, want string, g *stageconfig.GrantMount) (int, error) {
		// The skill folder (which planning refused if it held mounts)
		// and a grant are cloned alone, and so is each mount planning
		// saw below a grant (GrantMount.Below): a mount made there
		// since stays out.
		fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			return 0, err
		}
		grants.MakePrivate(fd)
		if g != nil {
			if err := stageconfig.SameGrant(fd, *g); err != nil {
				unix.Close(fd)
				return 0, err
			}
		}
		mapped, toMap := false, ownedByCaller(fd)
		if want == "r" {
			// The skill folder is the skill's own: always mapped. A read
			// grant only when the sandbox identity could not use the
			// granted path itself otherwise (a 0700 folder, a 0600 file
			// named exactly): the mapping makes every root-owned file
			// below it the script's, so a folder others may enter
			// (--read /etc) is handed over unmapped and the kernel checks
			// each file inside against its "other" bits
			// (/etc/ssl/private stays closed).
			toMap = g == nil || !othersMayUse(fd)
		}
		if userns >= 0 && toMap {
			attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(userns)}
			mapped = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr) == nil
		}
		if !mapped && !grantAccessible(path, uid, gid, want) {
			unix.Close(fd)
			return 0, errGrantAccess(path, uid, want, toMap)
		}
		files = append(files, os.NewFile(uintptr(fd), path))
		return stageconfig.FirstTreeFD + len(files) - 1, nil
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
		for j := range g.Below {
			// Each lies at or under a masked entry (CheckSubmounts):
			// attached for the mask's check, never read through.
			fd, err := grants.OpenSubmount(g.Below[j])
			if err != nil {
				return fail(err)
			}
			files = append(files, os.NewFile(uintptr(fd), g.Below[j].Path))
			g.Below[j].Tree = stageconfig.FirstTreeFD + len(files) - 1
		}
	}
	return files, nil
}

// ownedByCaller reports whether the folder or file fd (a detached tree)
// belongs to the caller: only then does mapping the caller to the sandbox
// identity give the script what it would have as the caller. A folder of
// uid 65534 (made for the sandbox before write grants were mapped) stays
// unmapped, where it is writable as it is.
func ownedByCaller(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && int(st.Uid) == os.Geteuid()
}

// othersMayUse reports whether the file or folder fd may be read (and,
// a folder, searched) by anyone: its mode's "other" bits, which is what
// the sandbox identity has of a root-owned path that is not id-mapped.
func othersMayUse(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	want := uint32(0o004)
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		want = 0o005
	}
	return st.Mode&want == want
}

// grantAccessible reports whether uid:gid may use path itself as want
// (see wantBits).
func grantAccessible(path string, uid, gid int, want string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	return identity.MayAccess(path, uid, gid, wantBits(want, st.IsDir()))
}

// wantBits are the permission bits a grant needs: "r" read, "rw" read and
// write, "x" (the working directory) search only; folders also need
// search permission.
func wantBits(want string, folder bool) uint32 {
	var bits uint32
	switch want {
	case "r":
		bits = identity.PermRead
	case "rw":
		bits = identity.PermRead | 2
	}
	if folder {
		bits |= identity.PermExec
	}
	return bits
}

// checkOwnReach refuses a grant that the caller, as whom the sandbox runs,
// cannot use as reach says (a --read /root of an unprivileged user): the
// script would only meet EACCES. faccessat(2) with AT_EACCESS asks the
// kernel, so supplementary groups, ACLs and a read-only file system count
// as they will for the script. A mount namespace changes nothing here: the
// grant is bound in with its owner and mode, and the folders above it
// were searchable, or it could not have been resolved.
func checkOwnReach(reach map[string]string) error {
	for _, path := range slices.Sorted(maps.Keys(reach)) {
		want := reach[path]
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrBadConfig, path, err)
		}
		err = unix.Faccessat(unix.AT_FDCWD, path, wantBits(want, st.IsDir()), unix.AT_EACCESS)
		if err == nil {
			continue
		}
		how, chmod := accessWords(want, "u")
		return fmt.Errorf("%w: %s is not %s by uid %d, the identity the sandbox runs as (%v); the script could not use it (fix: chmod %s %s if it is yours, or grant a path you can use)", ErrBadConfig, path, how, os.Geteuid(), err, chmod, path)
	}
	return nil
}

// accessWords names what want ("r", "rw" or "x") asks of a path, and the
// chmod mode that gives it to who ("u" or "o").
func accessWords(want, who string) (how, chmod string) {
	switch want {
	case "rw":
		return "writable", who + "+rwX"
	case "x":
		return "searchable", who + "+x"
	}
	return "readable", who + "+rX"
}

// errGrantAccess names the path the sandbox identity cannot use, and the
// fix; unmapped says that it was to be id-mapped and could not be.
func errGrantAccess(path string, uid int, want string, unmapped bool) error {
	how, chmod := accessWords(want, "o")
	why := ""
	if unmapped {
		why = ", and it cannot be id-mapped here"
	}
	chown := fmt.Sprintf("chown %d %s, or ", uid, path)
	if identity.IsRunID(uint32(uid)) {
		chown = "" // the next run has another id
	}
	return fmt.Errorf("%w: %s is not %s by %s the identity the sandbox runs as%s (fix: %schmod %s %s, or let skill-sandbox create the --write folder, or run skill-sandbox as its owner rather than root)", ErrBadConfig, path, how, identity.Name(uid), why, chown, chmod, path)
}

// checkGrantReach is the permission check without a mount namespace,
// where the script reaches each grant through the host's folders as the
// sandbox identity. When that identity is the caller's own, the kernel
// answers for it (checkOwnReach).
func checkGrantReach(uid, gid int, reach map[string]string) error {
	if uid == os.Geteuid() {
		return checkOwnReach(reach)
	}
	for path, want := range reach {
		if bad := identity.Unreachable(path, uid, gid, identity.PermExec); bad != "" && bad != path {
			return errUnreachable(bad, uid)
		}
		if !grantAccessible(path, uid, gid, want) {
			return errGrantAccess(path, uid, want, false)
		}
	}
	return nil
}
