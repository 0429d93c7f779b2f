package grants

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// maxNamedMounts bounds the mount points one refusal names.
const maxNamedMounts = 8

// CheckSkillMounts refuses a skill folder that holds other mounts, read
// from the mount table now. The skill folder is bound into the sandbox
// alone, as grants are (a mount made below it after this check stays
// out), and read-only by one remount of its own mount: a mount below it
// would show the folder under it instead, or, bound along, be checked by
// no rule (id-mapped for a root caller) and stay writable.
func CheckSkillMounts(skill string) error {
	if skill == "" {
		return nil
	}
	return DenyAliases{mounts: readMountTable()}.CheckSkill(skill)
}

// CheckSkill is CheckSkillMounts on the mount table read at planning.
func (a DenyAliases) CheckSkill(skill string) error {
	if skill == "" {
		return nil
	}
	if r, err := filepath.EvalSymlinks(skill); err == nil {
		skill = r
	}
	var points []string
	for _, m := range a.mounts {
		if PathUnder(m.point, skill) && !slices.Contains(points, m.point) {
			points = append(points, m.point)
		}
	}
	if len(points) == 0 {
		return nil
	}
	slices.Sort(points)
	return fmt.Errorf("%w: the skill folder %s holds other mounts: %s; they would come into the sandbox with it, unchecked by the rules a grant gets, or leave their folders empty; copy the skill to a folder that holds none", stageconfig.ErrBadConfig, skill, namedMounts(points))
}

// namedMounts names the first maxNamedMounts of points.
func namedMounts(points []string) string {
	named := strings.Join(points[:min(len(points), maxNamedMounts)], ", ")
	if len(points) > maxNamedMounts {
		named += fmt.Sprintf(" and %d more", len(points)-maxNamedMounts)
	}
	return named
}

// PlanBelow sets each grant's Held and Below (see stageconfig.GrantMount)
// from the mount table read at planning. A mount below a grant that is not
// granted itself is recorded for the innermost grant holding it, with the
// identity it has now. Of mounts stacked at one point only the one on top
// (listed last) can be reached; a recorded mount that is not the one its
// path reaches (hidden under a mount above it, or changed meanwhile)
// refuses the run: it could not be checked when it is bound.
func (a DenyAliases) PlanBelow(mounts []stageconfig.GrantMount) error {
	paths := make([]string, len(mounts))
	for i, g := range mounts {
		paths[i] = g.Path
	}
	for i := range mounts {
		g := &mounts[i]
		g.Held, g.Below = 0, nil
		top := map[string]mountEntry{}
		for _, m := range a.mounts {
			if !PathUnder(m.point, g.Path) {
				continue
			}
			g.Held++
			if !slices.Contains(paths, m.point) && innermost(paths, m.point) == g.Path {
				top[m.point] = m
			}
		}
		below := slices.SortedFunc(maps.Keys(top), func(x, y string) int {
			return strings.Count(x, "/") - strings.Count(y, "/")
		})
		for _, p := range below {
			sub, err := subMountNow(g.Path, top[p])
			if err != nil {
				return err
			}
			g.Below = append(g.Below, sub)
		}
	}
	return nil
}

// innermost returns the longest of paths that holds p.
func innermost(paths []string, p string) string {
	var in string
	for _, c := range paths {
		if PathUnder(p, c) && len(c) > len(in) {
			in = c
		}
	}
	return in
}

// subMountNow records the mount m below grant with the identity its path
// reaches now, which must be m itself.
func subMountNow(grant string, m mountEntry) (stageconfig.SubMount, error) {
	st, err := os.Lstat(m.point)
	if err != nil {
		return stageconfig.SubMount{}, fmt.Errorf("%w: the mount at %s below %s: %v", stageconfig.ErrBadConfig, m.point, grant, err)
	}
	id, mnt := fileIDOf(st), mountIDOf(m.point)
	if mnt != 0 && m.id != 0 && mnt != m.id {
		return stageconfig.SubMount{}, fmt.Errorf("%w: the mount at %s below %s is hidden by another mount (or changed while the run was planned): its path reaches mount %d, not %d; grant folders that hold none", stageconfig.ErrBadConfig, m.point, grant, mnt, m.id)
	}
	sub := stageconfig.SubMount{Path: m.point, MntID: m.id, Dev: id[0], Ino: id[1]}
	var stx unix.Statx_t
	if unix.Statx(unix.AT_FDCWD, m.point, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID_UNIQUE, &stx) == nil && stx.Mask&unix.STATX_MNT_ID_UNIQUE != 0 {
		sub.MntID, sub.Unique = stx.Mnt_id, true
	}
	return sub, nil
}

// OpenSubmount returns a detached clone of the mount b alone (open_tree(2)
// with OPEN_TREE_CLONE, without AT_RECURSIVE: a mount made below it since
// planning stays out), after checking that the mount at b.Path is the
// one planning saw: a mount's root, of the same mount id, device and
// inode. A mount unmounted, swapped or covered since refuses the run
// (stageconfig.ErrBadConfig); other errors are open_tree's.
func OpenSubmount(b stageconfig.SubMount) (int, error) {
	fd, err := unix.Open(b.Path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("%w: the mount at %s, seen below a grant when the run was planned: %v; refused", stageconfig.ErrBadConfig, b.Path, err)
	}
	defer unix.Close(fd)
	if err := sameSubmount(fd, b); err != nil {
		return -1, err
	}
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if err == nil {
		MakePrivate(tree)
	}
	return tree, err
}

// MakePrivate makes the detached tree open on fd private, recursively,
// before it is handed over: a clone of a shared host mount is a peer of
// it, and once the init process attaches it (until it makes it private
// there) a mount made on either side would appear on the other. A
// failure (before Linux 5.12) is left to the init process's own
// MS_PRIVATE right after the attach.
func MakePrivate(fd int) {
	attr := unix.MountAttr{Propagation: unix.MS_PRIVATE}
	unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr)
}

// sameSubmount refuses the file open on fd unless it is the root of the
// mount b.
func sameSubmount(fd int, b stageconfig.SubMount) error {
	var stx unix.Statx_t
	want := uint32(unix.STATX_MNT_ID)
	if b.Unique {
		want = unix.STATX_MNT_ID_UNIQUE
	}
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BASIC_STATS|int(want), &stx); err != nil {
		return fmt.Errorf("the mount at %s: statx: %v", b.Path, err)
	}
	root := stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 || stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
	sameID := b.MntID == 0 || stx.Mask&want == want && stx.Mnt_id == b.MntID
	dev := unix.Mkdev(stx.Dev_major, stx.Dev_minor)
	if !root || !sameID || dev != b.Dev || stx.Ino != b.Ino {
		return fmt.Errorf("%w: the mount at %s changed since the run was planned (unmounted, replaced or covered by another mount); refused", stageconfig.ErrBadConfig, b.Path)
	}
	return nil
}

// CheckSubmounts refuses a grant that holds another mount (a bind mount,
// a tmpfs, a FUSE or NFS mount, an automount point), unless that mount is
// granted on its own or hidden as a deny entry (masked). Bound with the
// grant, such a mount would be checked by no rule of its own (a
// non-recursive bind of a folder with mounts below it is refused in a user
// namespace, so there its mounts come along, id-mapped with it for a root
// caller). A bind of a root-only
// folder into a granted 0700 project was readable by the script. Granted
// on its own, a mount is resolved and checked as every grant is (deny
// list, owner, mode). The mount table is the one read when the run was
// planned (a.mounts). A mount made below a grant after that (by the
// caller's own or a privileged process on the host: the script cannot
// mount) is kept out (see stageconfig.GrantMount.Held and Below): the
// grant and each mount planning saw below it are bound alone, or, where
// the kernel allows no such bind, the run is refused unless exactly the
// mounts planning counted came along.
func (a DenyAliases) CheckSubmounts(read, write, masked []string) error {
	grants := append(slices.Clone(write), read...)
	held := map[string][]string{}
	var order []string
	for _, m := range a.mounts {
		p := m.point
		if slices.Contains(grants, p) || slices.ContainsFunc(masked, func(d string) bool { return p == d || PathUnder(p, d) }) {
			continue
		}
		// The innermost grant holding p.
		var g string
		for _, c := range grants {
			if PathUnder(p, c) && len(c) > len(g) {
				g = c
			}
		}
		if g == "" || slices.Contains(held[g], p) {
			continue
		}
		if len(held[g]) == 0 {
			order = append(order, g)
		}
		held[g] = append(held[g], p)
	}
	if len(order) == 0 {
		return nil
	}
	g := order[0]
	flag := "--read"
	if slices.Contains(write, g) {
		flag = "--write"
	}
	points := held[g]
	slices.Sort(points)
	named := namedMounts(points)
	return fmt.Errorf("%w: %s %s holds other mounts: %s; they would come into the sandbox with it, unchecked by the rules a grant gets (deny list, owner, mode); grant each on its own (%s %s), or grant folders that hold none", stageconfig.ErrBadConfig, flag, g, named, flag, points[0])
}
