package grants

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/denylist"
	"github.com/skill-sandbox/skill-sandbox/internal/walk"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// planner holds what New works with while it resolves one Request's
// grants: the plan being filled and the deny list the grants are checked
// against.
type planner struct {
	r       *Request
	gp      *Plan
	deny    *denylist.List
	alias   DenyAliases
	allowed map[string]bool // AllowDenied, as given and resolved
	typed   []typedPath     // the grants and the cwd, as typed and resolved
}

// allowedPaths returns the AllowDenied paths made absolute, each also
// with its symlinks resolved when it exists.
func allowedPaths(paths []string) (map[string]bool, error) {
	allowed := map[string]bool{}
	for _, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("%w: AllowDenied %q: %v", stageconfig.ErrBadConfig, p, err)
		}
		allowed[a] = true
		if r, err := filepath.EvalSymlinks(a); err == nil {
			allowed[r] = true
		}
	}
	return allowed, nil
}

// grantFlag is the flag that names a grant in error messages.
func grantFlag(write bool) string {
	if write {
		return "--write"
	}
	return "--read"
}

// resolve returns the real path of the grant p (a write grant when write
// is set), checked: not the whole file system, not reached through a
// planted symlink, not overlapping the skill folder (write), not on or
// holding the deny list, of the right type. A missing write folder is
// made (or, in a dry run, noted in gp.ToMake). It records the grant as
// typed and its file id.
func (pl *planner) resolve(p string, write bool) (string, error) {
	flag := grantFlag(write)
	if p == "" {
		return "", fmt.Errorf("%w: empty %s path", stageconfig.ErrBadConfig, flag)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s %s: %v", stageconfig.ErrBadConfig, flag, p, err)
	}
	if abs == "/" {
		return "", fmt.Errorf("%w: %s /: granting the whole file system is refused; grant the folders the script needs", stageconfig.ErrBadConfig, flag)
	}
	// A root caller's grant may not go through a symlink of the
	// sandbox identity's (resolveUnplanted); checked before a write
	// folder is created, and the real path taken from that same walk.
	checkLinks := pl.r.Nominal >= 0 && pl.r.Nominal != os.Geteuid()
	if write {
		if err := pl.prepareWrite(p, abs, checkLinks); err != nil {
			return "", err
		}
	}
	real, walked, err := pl.resolveReal(p, abs, write, checkLinks)
	if err != nil {
		return "", err
	}
	if err := pl.checkReal(p, abs, real, walked, write); err != nil {
		return "", err
	}
	pl.typed = append(pl.typed, typedPath{flag, abs, real})
	if write && !pl.allowed[real] {
		if err := pl.checkCreatable(p, real); err != nil {
			return "", err
		}
	}
	return real, nil
}

// planted resolves abs as the grant p (named by flag) one name at a time
// (ResolveUnplanted), refusing a symlink of the sandbox identity
// (Request.Planted) on the way. info is nil when the walk found nothing.
func (pl *planner) planted(p, abs, flag string) (string, fs.FileInfo, error) {
	real, info, link := walk.ResolveUnplanted(abs, pl.r.Planted)
	if link != "" {
		return "", nil, fmt.Errorf("%w: %s %s goes through the symlink %s, which belongs to the identity sandboxed scripts run as (uid %d, or a run's own id of %d-%d): a script may have planted it to redirect this grant; name the real path", stageconfig.ErrBadConfig, flag, p, link, pl.r.Nominal, pl.r.RunIDs[0], pl.r.RunIDs[1])
	}
	return real, info, nil
}

// prepareWrite checks the write grant p (absolute: abs) before anything
// is made for it: no planted symlink on the way (checkLinks), no overlap
// with the skill folder; then makes it when it is missing (or, in a dry
// run, notes the folders it would make).
func (pl *planner) prepareWrite(p, abs string, checkLinks bool) error {
	if checkLinks {
		if _, _, err := pl.planted(p, abs, "--write"); err != nil {
			return err
		}
	}
	if pl.r.Skill != "" {
		if err := checkSkillGrants(pl.r.Skill, []string{abs}); err != nil {
			return err
		}
	}
	if _, err := os.Lstat(abs); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := CheckGrantable(abs, "--write", pl.deny, pl.allowed); err != nil {
		return err
	}
	return pl.makeMissing(p, abs)
}

// makeMissing makes the missing write folder abs (the grant p) and its
// missing parents, recording them in gp.Made and the grant in Created;
// in a dry run it only notes them in gp.ToMake.
func (pl *planner) makeMissing(p, abs string) error {
	gp := pl.gp
	if pl.r.Dry {
		if err := wouldMakeFolder(abs, gp.ToMake, pl.r.Writable); err != nil {
			return fmt.Errorf("%w: --write %s: %v", stageconfig.ErrBadConfig, p, err)
		}
		if !slices.Contains(gp.Grants.Created, abs) {
			gp.Grants.Created = append(gp.Grants.Created, abs)
		}
		return nil
	}
	made, err := MakeWriteFolder(abs, pl.r.UID, pl.r.GID, pl.mapWrite())
	gp.Made = append(gp.Made, made...)
	if err != nil {
		return fmt.Errorf("%w: --write %s: %v", stageconfig.ErrBadConfig, p, err)
	}
	if slices.Contains(made, abs) {
		gp.Grants.Created = append(gp.Grants.Created, abs)
	}
	return nil
}

// resolveReal returns the real path of the grant p (absolute: abs) and,
// when the planted-symlink walk found it (checkLinks), what that walk saw
// of it, so that the checks use the very file the walk resolved.
func (pl *planner) resolveReal(p, abs string, write, checkLinks bool) (real string, walked fs.FileInfo, err error) {
	flag := grantFlag(write)
	if checkLinks && !write {
		// One walk checks and resolves a read grant (a hundred grants
		// cost a hundred walks, not three hundred): the real path is
		// what the walk saw; EvalSymlinks only names a missing path's
		// error.
		r, info, perr := pl.planted(p, abs, flag)
		switch {
		case perr != nil:
			return "", nil, perr
		case info != nil:
			real, walked = r, info
		default:
			if real, err = filepath.EvalSymlinks(abs); err == nil && !pl.r.Dry {
				err = errors.New("changed while it was resolved")
			}
		}
	} else {
		real, err = filepath.EvalSymlinks(abs)
		if r, ok := pl.gp.ToMake[abs]; ok && errors.Is(err, fs.ErrNotExist) {
			real, err = r, nil
		}
		if checkLinks && err == nil {
			r, info, perr := pl.planted(p, abs, flag)
			switch {
			case perr != nil:
				return "", nil, perr
			case info != nil:
				real, walked = r, info
			case !pl.r.Dry:
				err = errors.New("changed while it was resolved")
			}
		}
	}
	if err != nil {
		return "", nil, fmt.Errorf("%w: %s %s: %v", stageconfig.ErrBadConfig, flag, p, err)
	}
	return real, walked, nil
}

// checkReal checks the real path of the grant p (absolute: abs): not the
// root, grantable, not a deny entry by another name (Aliases), a folder
// for a write grant or a folder or regular file for a read one (walked,
// when set, is what the planted-symlink walk saw of it), and, for a write
// grant, clear of the skill folder. It records the file id it checked.
func (pl *planner) checkReal(p, abs, real string, walked fs.FileInfo, write bool) error {
	flag := grantFlag(write)
	if real == "/" {
		return fmt.Errorf("%w: %s %s resolves to /: granting the whole file system is refused", stageconfig.ErrBadConfig, flag, p)
	}
	never := NeverGranted()
	if !write && slices.Contains(pl.r.Sockets, p) {
		never = socketNeverGranted()
	}
	if err := checkGrantable(real, flag, never, pl.deny, pl.allowed); err != nil {
		return err
	}
	if err := pl.alias.Check(real, flag, write, pl.allowed); err != nil {
		return err
	}
	st, err := os.Stat(real)
	if walked != nil {
		st, err = walked, nil // what the walk saw, not a second lookup
	}
	if err == nil {
		switch {
		case write && !st.IsDir():
			return fmt.Errorf("%w: --write %s is not a folder", stageconfig.ErrBadConfig, p)
		case !write && st.Mode().Type() == fs.ModeSocket && slices.Contains(pl.r.Sockets, p):
			// A socket named as one (AllowUnix): the mount gives the
			// run this socket only.
		case !st.IsDir() && !st.Mode().IsRegular():
			return fmt.Errorf("%w: --read %s is neither a regular file nor a folder", stageconfig.ErrBadConfig, p)
		}
		pl.gp.IDs[real] = fileIDOf(st)
	} else if _, ok := pl.gp.ToMake[abs]; !ok || !pl.r.Dry {
		return fmt.Errorf("%w: %s %s: %v", stageconfig.ErrBadConfig, flag, p, err)
	}
	if write && pl.r.Skill != "" {
		return checkSkillGrants(pl.r.Skill, []string{real})
	}
	return nil
}

// mapWrite is Request.MapWrite for a run with a mount namespace; without
// one nothing is handed over id-mapped.
func (pl *planner) mapWrite() func(string) bool {
	if !pl.r.MountNS || pl.r.MapWrite == nil {
		return func(string) bool { return false }
	}
	return pl.r.MapWrite
}

// checkCreatable refuses the write grant p (real path: real) when the
// script could create a deny entry inside it.
func (pl *planner) checkCreatable(p, real string) error {
	for _, d := range pl.deny.Entries() {
		base := denylist.Base(d)
		if (PathUnder(base, real) || base == real && denylist.HasMeta(d)) && !pl.allowed[d] {
			return fmt.Errorf("%w: --write %s would let the script create %s, which is on the deny list; grant a folder that holds no home folder or credential path", stageconfig.ErrBadConfig, p, d)
		}
	}
	return nil
}
