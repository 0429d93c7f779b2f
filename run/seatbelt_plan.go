package run

import (
	"path/filepath"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/denylist"
)

// seatbeltPolicyOf turns a run's plan into the policy of its macOS
// profile: the same resolved skill folder, work folder, grants and deny
// list the Linux layers enforce. The deny list is expanded here as
// planGrants does it (every home folder, resolved paths too, AllowDenied
// entries dropped), and wildcard entries are expanded to the paths that
// exist: the profile names paths, and a denied path that does not exist
// yet can only be created inside a write grant, which planGrants refuses
// when it could hold one.
func seatbeltPolicyOf(p *plan) seatbeltPolicy {
	pol := seatbeltPolicy{
		Skill:   p.cfg.Skill,
		WorkDir: p.cfg.WorkDir,
		System:  seatbeltSystemTrees(),
	}
	for _, g := range p.cfg.Grants {
		if g.Write {
			pol.Write = append(pol.Write, g.Path)
		} else {
			pol.Read = append(pol.Read, g.Path)
		}
	}
	allowed := map[string]bool{}
	for _, a := range p.allowDenied {
		if abs, err := filepath.Abs(a); err == nil {
			allowed[abs] = true
			if r, err := filepath.EvalSymlinks(abs); err == nil {
				allowed[r] = true
			}
		}
	}
	for _, d := range denylist.Expand(append(DefaultDenyPaths(), p.denyPaths...), denylist.HomeFolders(), allowed) {
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
	if t := interpreterTree(p.cfg.Argv[0], append(pol.System, pol.Skill)); t != "" &&
		!slices.ContainsFunc(pol.Deny, func(d string) bool { return t == d || pathUnder(t, d) }) {
		pol.System = append(pol.System, t)
	}
	switch {
	case p.cfg.AllowNetwork:
		pol.Network = seatbeltFullNetwork
	case p.proxy != nil:
		pol.Network, pol.ProxyPort = seatbeltProxyOnly, p.cfg.ProxyPort
	}
	return pol
}

// interpreterTree returns what the profile must add so that the script
// can read and execute its interpreter when no tree in system holds it
// ("" when one does). An interpreter under a software prefix (/opt,
// /Library, /Applications, /nix) gets its prefix, the folder above its
// bin/ (MacPorts' /opt/local, a framework's Versions/3.12), where its
// libraries are. Anywhere else, a home folder say, where a prefix could
// be the whole folder, only the binary itself is granted: the shebang is
// the skill's choice, and the skill must not widen what the script reads.
func interpreterTree(argv0 string, system []string) string {
	real, err := filepath.EvalSymlinks(argv0)
	if err != nil {
		return ""
	}
	for _, t := range system {
		if real == t || pathUnder(real, t) {
			return ""
		}
	}
	prefix := filepath.Dir(real)
	if filepath.Base(prefix) == "bin" {
		prefix = filepath.Dir(prefix)
	}
	for _, root := range []string{"/opt", "/Library", "/Applications", "/nix"} {
		if pathUnder(prefix, root) {
			return prefix
		}
	}
	return real
}
