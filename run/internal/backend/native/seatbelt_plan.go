package native

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"path/filepath"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/denylist"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seatbelt"
)

// seatbeltPolicyOf turns a run's plan into the policy of its macOS
// profile: the same resolved skill folder, work folder, grants and deny
// list the Linux layers enforce. The deny list is expanded here as
// planGrants does it (every home folder, resolved paths too, AllowDenied
// entries dropped), and wildcard entries are expanded to the paths that
// exist: the profile names paths, and a denied path that does not exist
// yet can only be created inside a write grant, which planGrants refuses
// when it could hold one.
func seatbeltPolicyOf(p *backend.Spec) seatbelt.Policy {
	pol := seatbelt.Policy{
		Skill:   p.Config.Skill,
		WorkDir: p.Config.WorkDir,
		System:  seatbelt.SystemTrees(),
	}
	for _, g := range p.Config.Grants {
		if g.Write {
			pol.Write = append(pol.Write, g.Path)
		} else {
			pol.Read = append(pol.Read, g.Path)
		}
	}
	allowed := map[string]bool{}
	for _, a := range p.AllowDenied {
		if abs, err := filepath.Abs(a); err == nil {
			allowed[abs] = true
			if r, err := filepath.EvalSymlinks(abs); err == nil {
				allowed[r] = true
			}
		}
	}
	for _, d := range denylist.Expand(append(stageconfig.DefaultDenyPaths(), p.DenyPaths...), denylist.HomeFolders(), allowed) {
		matches := []string{d}
		if denylist.HasMeta(d) {
			matches, _ = filepath.Glob(d)
		}
		for _, m := range matches {
			if !allowed[m] && !slices.Contains(pol.Deny, m) {
				pol.Deny = append(pol.Deny, m)
			}
		}
	}
	// The interpreter is the skill's choice (its shebang may name any
	// absolute path): one inside a deny entry is not granted, so exec
	// fails, as it does on Linux where it is absent from the root.
	if t := seatbelt.InterpreterTree(p.Config.Argv[0], append(pol.System, pol.Skill)); t != "" &&
		!slices.ContainsFunc(pol.Deny, func(d string) bool { return t == d || grants.PathUnder(t, d) }) {
		pol.System = append(pol.System, t)
	}
	switch {
	case p.Config.AllowNetwork:
		pol.Network = seatbelt.FullNetwork
	case p.Proxy != nil:
		pol.Network, pol.ProxyPort = seatbelt.ProxyOnly, p.Config.ProxyPort
	}
	return pol
}
