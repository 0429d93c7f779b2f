package grants

import (
	"errors"
	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"os"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// HandOver lets a sandbox that runs as another identity than the caller
// (a root caller: identity.Nobody or a run id) reach the skill folder and the grants
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
func HandOver(uid, gid int, cfg *stageconfig.Config, skillToo bool) ([]*os.File, error) {
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
	// nothing is handed over, and run's reach checks and CheckReach
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
		if errors.Is(err, stageconfig.ErrBadConfig) {
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
		MakePrivate(fd)
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
			fd, err := OpenSubmount(g.Below[j])
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
