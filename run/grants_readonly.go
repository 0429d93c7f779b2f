package run

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/denylist"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// Read-only parts of write grants (Sandbox.ReadOnlyPaths, a policy's
// deny_write inside a write grant) and deny-list entries inside a write
// grant that AllowDenied exempted by its exact path: Landlock grants a
// folder with everything beneath it and cannot take access back from a
// part, so only the mount namespace can keep these (a read-only bind mount,
// a mask). A run that gets no mount namespace is therefore refused, with
// --allow-degraded too: the grant would silently be wider than asked.

// planReadOnly resolves s.ReadOnlyPaths against the write grants of gp,
// masks the existing deny entries inside write grants that AllowDenied
// exempted (and refuses such a grant when an entry inside it is missing:
// the script could create it), and sets gp.mountOnly when either needs the
// mount namespace.
func (s *Sandbox) planReadOnly(gp *grantPlan, deny *denylist.List, allowed map[string]bool) error {
	for _, p := range s.ReadOnlyPaths {
		abs, err := filepath.Abs(p)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			// A missing path could be created by the script, writable.
			return fmt.Errorf("%w: read-only path %s: %v (it must exist: a script could create it inside a write grant)", ErrBadConfig, p, err)
		}
		if slices.Contains(gp.grants.Write, abs) {
			return fmt.Errorf("%w: read-only path %s is a write grant itself; grant it for reading instead", ErrBadConfig, p)
		}
		if !slices.ContainsFunc(gp.grants.Write, func(w string) bool { return pathUnder(abs, w) }) {
			continue // nothing writes there anyway
		}
		st, err := os.Lstat(abs)
		if err != nil {
			return fmt.Errorf("%w: read-only path %s: %v", ErrBadConfig, p, err)
		}
		if !slices.Contains(gp.grants.ReadOnly, abs) {
			id := fileIDOf(st)
			gp.grants.ReadOnly = append(gp.grants.ReadOnly, abs)
			gp.readOnly = append(gp.readOnly, stageconfig.GrantMount{Path: abs, Dev: id[0], Ino: id[1]})
		}
	}
	for _, w := range gp.grants.Write {
		if !allowed[w] {
			continue // planGrants refused it if it could hold an entry
		}
		for _, m := range deny.MatchesUnder(w, allowed) {
			_, err := os.Lstat(m)
			switch {
			case err == nil:
				if !slices.Contains(gp.grants.Masked, m) {
					gp.grants.Masked = append(gp.grants.Masked, m)
					gp.maskedInWrite = append(gp.maskedInWrite, m)
				}
			case !deny.Has(m):
				// A wildcard's match: only those that exist are
				// denied (/tmp/ssh-*); new ones are the script's own.
			default:
				// A missing entry cannot be masked, and the script
				// could create it (~/.ssh/authorized_keys).
				return fmt.Errorf("%w: --write %s would let the script create %s, which is on the deny list and cannot be hidden while it does not exist; create it first, or grant a folder that holds no home folder or credential path", ErrBadConfig, w, m)
			}
		}
	}
	if err := s.planAutorun(gp); err != nil {
		return err
	}
	switch {
	case !mountGrants:
		// macOS: the Seatbelt profile denies the deny entries inside
		// exempted grants again (seatbelt.go); a read-only part is not
		// implemented there.
		if len(gp.readOnly) > 0 {
			return fmt.Errorf("%w: read-only paths inside write grants (%s) are kept by a Linux mount namespace only", ErrUnsupported, gp.readOnly[0].Path)
		}
	case len(gp.readOnly) > 0:
		hint := ""
		if len(gp.grants.Autorun) > 0 {
			hint = "; files that tools run on their own (.git, .envrc, ...) are read-only by default: --allow-autorun GRANT keeps them writable"
		}
		gp.mountOnly = fmt.Errorf("%w: %s must stay read-only inside a write grant, which needs the mount namespace (Landlock cannot take access back from part of a granted folder)%s", ErrIsolation, gp.readOnly[0].Path, hint)
	case len(gp.maskedInWrite) > 0:
		gp.mountOnly = fmt.Errorf("%w: %s on the deny list lies inside a write grant and can be hidden only by the mount namespace (Landlock cannot take access back from part of a granted folder)", ErrIsolation, gp.maskedInWrite[0])
	}
	return nil
}
