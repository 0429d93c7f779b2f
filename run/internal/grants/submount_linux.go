package grants

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// maxNamedMounts bounds the mount points one refusal names.
const maxNamedMounts = 8

// HoldsMounts reports whether the mount table read at planning has a
// mount point below p (stageconfig.GrantMount.Submounts).
func (a DenyAliases) HoldsMounts(p string) bool {
	return slices.ContainsFunc(a.mounts, func(m mountEntry) bool { return PathUnder(m.point, p) })
}

// CheckSubmounts refuses a grant that holds another mount (a bind mount,
// a tmpfs, a FUSE or NFS mount, an automount point), unless that mount is
// granted on its own or hidden as a deny entry (masked). A grant is bound
// into the sandbox recursively (a non-recursive bind of a folder with
// mounts below it is refused in a user namespace, and would show what
// lies under them), so its mounts come along: id-mapped with it for a root
// caller, and checked by no rule of their own. A bind of a root-only
// folder into a granted 0700 project was readable by the script. Granted
// on its own, a mount is resolved and checked as every grant is (deny
// list, owner, mode). The mount table is the one read when the run was
// planned (a.mounts). A mount made below a grant after that (by the
// caller's own or a privileged process on the host: the script cannot
// mount) is kept out by the bind: a grant that held no mount is bound
// alone (GrantMount.Submounts), and one that held mounts recursively, so
// that only there a mount made in the window comes along unchecked.
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
	named := strings.Join(points[:min(len(points), maxNamedMounts)], ", ")
	if len(points) > maxNamedMounts {
		named += fmt.Sprintf(" and %d more", len(points)-maxNamedMounts)
	}
	return fmt.Errorf("%w: %s %s holds other mounts: %s; they would come into the sandbox with it, unchecked by the rules a grant gets (deny list, owner, mode); grant each on its own (%s %s), or grant folders that hold none", stageconfig.ErrBadConfig, flag, g, named, flag, points[0])
}
