package grants

import (
	"fmt"
	"sort"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// A grant typed through a symlink (--read ~/datalink, ~/datalink ->
// /mnt/data) is mounted at its resolved path; the typed path must work
// inside too, since the script is given the arguments the user typed.
// Where the typed path lies in a folder the sandbox shows from the host
// (a grant, the skill folder, a system folder), the host's own symlink is
// there and leads to the mounted grant. Elsewhere the sandbox's root is
// its own tmpfs (or its private /tmp), and the init process re-creates the
// typed path there as a symlink to the resolved grant (a GrantAlias).
// Without a mount namespace the script sees the host's folders, symlinks
// included, and Landlock checks what they lead to.

// typedPath is a grant or working directory as given (absolute, clean)
// and as resolved.
type typedPath struct {
	flag, typed, real string
}

// shadowed are the trees where the sandbox has its own content that an
// alias would hide or replace: kernel interfaces, devices, runtime
// sockets and /etc, rebuilt for the sandbox.
func shadowed() []string { return append(NeverGranted(), "/etc") }

// planAliases sets gp.Aliases from the grants typed through a symlink,
// refusing one whose alias would stand where the sandbox has its own
// content (shadowed, the private /tmp itself) or over what the sandbox
// mounts (the skill folder, a grant). An alias grants nothing; only the
// resolved grant is mounted and in the Landlock rules.
func (gp *Plan) planAliases(skill string, typed []typedPath) error {
	if !mountGrants {
		return nil // no mount namespace: the host's symlinks are seen
	}
	// Shorter first: a typed path below another alias resolves through it.
	sort.SliceStable(typed, func(i, j int) bool {
		return strings.Count(typed[i].typed, "/") < strings.Count(typed[j].typed, "/")
	})
	shown := append(append(append([]string{}, gp.Grants.Read...), gp.Grants.Write...), stageconfig.SystemDirs()...)
	mounted := append(append([]string{}, gp.Grants.Read...), gp.Grants.Write...)
	if skill != "" {
		shown = append(shown, skill)
		mounted = append(mounted, skill)
	}
	var aliased []string
	for _, t := range typed {
		if t.typed == t.real || underAny(t.typed, shown) || underAny(t.typed, aliased) {
			continue
		}
		if underAny(t.typed, shadowed()) || t.typed == "/tmp" {
			return fmt.Errorf("%w: %s %s resolves to %s, and the path as given lies where the sandbox has its own files, which a symlink there would shadow; give %s", stageconfig.ErrBadConfig, t.flag, t.typed, t.real, t.real)
		}
		for _, m := range mounted {
			if m == t.typed || PathUnder(m, t.typed) {
				return fmt.Errorf("%w: %s %s resolves to %s, and a symlink at the path as given would shadow %s, which the sandbox mounts; give %s", stageconfig.ErrBadConfig, t.flag, t.typed, t.real, m, t.real)
			}
		}
		aliased = append(aliased, t.typed)
		gp.Aliases = append(gp.Aliases, stageconfig.GrantAlias{Path: t.typed, Target: t.real})
	}
	return nil
}

// underAny reports whether p is one of dirs or lies below one.
func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || PathUnder(p, d) {
			return true
		}
	}
	return false
}
