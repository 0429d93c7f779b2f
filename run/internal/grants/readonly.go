package grants

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// Read-only parts of write grants (Request.ReadOnly, a policy's
// deny_write inside a write grant) and deny-list entries inside a write
// grant that AllowDenied exempted by its exact path: Landlock grants a
// folder with everything beneath it and cannot take access back from a
// part, so only the mount namespace can keep these (a read-only bind mount,
// a mask). A run that gets no mount namespace is therefore refused, with
// --allow-degraded too: the grant would silently be wider than asked.

// planReadOnly resolves Request.ReadOnly against the write grants of gp,
// masks the existing deny entries inside write grants that AllowDenied
// exempted (and refuses such a grant when an entry inside it is missing:
// the script could create it), and sets gp.MountOnly when either needs the
// mount namespace.
func (pl *planner) planReadOnly() error {
	gp, deny, allowed := pl.gp, pl.deny, pl.allowed
	for _, p := range pl.r.ReadOnly {
		abs, err := filepath.Abs(p)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			// A missing path could be created by the script, writable.
			return fmt.Errorf("%w: read-only path %s: %v (it must exist: a script could create it inside a write grant)", stageconfig.ErrBadConfig, p, err)
		}
		if slices.Contains(gp.Grants.Write, abs) {
			return fmt.Errorf("%w: read-only path %s is a write grant itself; grant it for reading instead", stageconfig.ErrBadConfig, p)
		}
		if !slices.ContainsFunc(gp.Grants.Write, func(w string) bool { return PathUnder(abs, w) }) {
			continue // nothing writes there anyway
		}
		st, err := os.Lstat(abs)
		if err != nil {
			return fmt.Errorf("%w: read-only path %s: %v", stageconfig.ErrBadConfig, p, err)
		}
		if !slices.Contains(gp.Grants.ReadOnly, abs) {
			id := fileIDOf(st)
			gp.Grants.ReadOnly = append(gp.Grants.ReadOnly, abs)
			gp.ReadOnly = append(gp.ReadOnly, stageconfig.GrantMount{Path: abs, Dev: id[0], Ino: id[1]})
		}
	}
	for _, w := range gp.Grants.Write {
		if !allowed[w] {
			continue // New refused it if it could hold an entry
		}
		for _, m := range deny.MatchesUnder(w, allowed) {
			_, err := os.Lstat(m)
			switch {
			case err == nil:
				if !slices.Contains(gp.Grants.Masked, m) {
					gp.Grants.Masked = append(gp.Grants.Masked, m)
					gp.maskedInWrite = append(gp.maskedInWrite, m)
				}
			case !deny.Has(m):
				// A wildcard's match: only those that exist are
				// denied (/tmp/ssh-*); new ones are the script's own.
			default:
				// A missing entry cannot be masked, and the script
				// could create it (~/.ssh/authorized_keys).
				return fmt.Errorf("%w: --write %s would let the script create %s, which is on the deny list and cannot be hidden while it does not exist; create it first, or grant a folder that holds no home folder or credential path", stageconfig.ErrBadConfig, w, m)
			}
		}
	}
	if err := pl.planAutorun(); err != nil {
		return err
	}
	switch {
	case !mountGrants:
		// macOS: the Seatbelt profile denies the deny entries inside
		// exempted grants again (seatbelt.go); a read-only part is not
		// implemented there.
		if len(gp.ReadOnly) > 0 {
			return &NoMountNSError{Path: gp.ReadOnly[0].Path}
		}
	case len(gp.ReadOnly) > 0:
		hint := ""
		if len(gp.Grants.Autorun) > 0 {
			hint = "; files that tools run on their own (.git, .envrc, ...) are read-only by default: --allow-autorun GRANT keeps them writable"
		}
		gp.MountOnly = fmt.Sprintf("%s must stay read-only inside a write grant, which needs the mount namespace (Landlock cannot take access back from part of a granted folder)%s", gp.ReadOnly[0].Path, hint)
	case len(gp.maskedInWrite) > 0:
		gp.MountOnly = fmt.Sprintf("%s on the deny list lies inside a write grant and can be hidden only by the mount namespace (Landlock cannot take access back from part of a granted folder)", gp.maskedInWrite[0])
	}
	return nil
}

// NoMountNSError refuses read-only parts of write grants where there is
// no mount namespace to keep them (macOS); run reports it as
// ErrUnsupported.
type NoMountNSError struct {
	Path string // the first read-only part
}

// Error names the read-only part, as run reported it.
func (e *NoMountNSError) Error() string {
	return fmt.Sprintf("read-only paths inside write grants (%s) are kept by a Linux mount namespace only", e.Path)
}
