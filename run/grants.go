package run

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/denylist"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// Grants are the host paths a run may use besides its skill and work
// folders, as resolved by Run (absolute, symlinks resolved). They are
// recorded in Result.Grants.
type Grants struct {
	Read  []string // files and folders the script may read
	Write []string // folders the script may create and change files in
	Cwd   string   // the script's working directory when Sandbox.Cwd is set
	// Created lists the Write folders Run created because they were
	// missing.
	Created []string
	// Masked lists the deny-list entries found inside Read grants (and
	// inside Write grants exempted by AllowDenied), hidden from the script
	// (see DefaultDenyPaths).
	Masked []string
	// ReadOnly lists the ReadOnlyPaths that lie inside Write grants: the
	// script reads them but cannot change them.
	ReadOnly []string
	// Autorun lists the files and folders inside Write grants that the
	// caller's tools run on their own (.git, .envrc, .vscode, ...: see
	// docs/grants.md), kept read-only; AutorunWritable the Write grants
	// exempted (Sandbox.AutorunWritable).
	Autorun         []string
	AutorunWritable []string
}

// maxGrantRules bounds the Landlock rules one run's grants may need (a
// read grant holding a denied entry is granted child by child).
const maxGrantRules = 4096

// grantPlan is what Run decided about the grants.
type grantPlan struct {
	grants Grants
	mounts []stageconfig.GrantMount // parents before children
	rules  []stageconfig.GrantRule
	// reach lists each grant with the access the sandbox identity needs
	// on it ("r" or "rw"; "x" for the working directory), for the
	// permission check.
	reach map[string]string
	// ids holds the device and inode of each resolved grant, as checked.
	ids map[string][2]uint64
	// readOnly are the read-only parts of write grants, mounted read-only
	// on themselves after the grants (lockReadOnly); maskedInWrite the
	// deny entries masked inside write grants. mountOnly, when set, is
	// the error that refuses a run without a mount namespace, the only
	// layer that keeps them (see planReadOnly).
	readOnly      []stageconfig.GrantMount
	maskedInWrite []string
	mountOnly     error
	// autorun maps the auto-run entries of write grants that existed when
	// the run was planned to their inodes; sweepAutorun lists the write
	// grants whose new auto-run entries are quarantined after the run
	// (see planAutorun).
	autorun      map[string]uint64
	sweepAutorun []string
	// made lists the folders Run created for missing write grants
	// (parents before children), so that a run refused before its script
	// started can remove them again (removeMade).
	made []string
	// aliases are the grants typed through a symlink that the init stage
	// re-creates at the path as typed (see planAliases).
	aliases []stageconfig.GrantAlias
	// toMake, in a dry run (CheckGrants), maps each folder a run would
	// create for a missing write grant (the grant and the parents made
	// for it, as given) to the path it would have once made.
	toMake map[string]string
}

// planGrants resolves and checks the grants of s. Relative paths are
// resolved against the process's working directory; missing write
// folders are created (and listed in Created), unless dry is set: they are
// then only checked as the folders that would be made (gp.toMake). A
// write grant may not overlap the skill folder (skill; "" skips the
// check).
func (s *Sandbox) planGrants(skill string, dry bool, uid, gid int) (_ *grantPlan, err error) {
	gp := &grantPlan{reach: map[string]string{}, ids: map[string][2]uint64{}, toMake: map[string]string{}}
	defer func() {
		if err != nil { // a refused run leaves nothing behind
			removeMade(gp.made)
		}
	}()
	if len(s.ReadPaths) == 0 && len(s.WritePaths) == 0 && s.Cwd == "" {
		return gp, nil // ReadOnlyPaths can only narrow write grants
	}
	allowed, err := allowedPaths(s.AllowDenied)
	if err != nil {
		return nil, err
	}
	deny := denylist.New(append(DefaultDenyPaths(), s.DenyPaths...), denylist.HomeFolders(), allowed)
	pl := &grantPlanner{s: s, skill: skill, dry: dry, uid: uid, gid: gid, gp: gp,
		deny: deny, alias: grants.FindAliases(deny, allowed), allowed: allowed}
	if err := pl.resolveGrants(); err != nil {
		return nil, err
	}
	if err := pl.planCwd(); err != nil {
		return nil, err
	}
	if err := gp.planAliases(skill, pl.typed); err != nil {
		return nil, err
	}
	if err := pl.planMasks(); err != nil {
		return nil, err
	}
	if err := gp.planMounts(); err != nil {
		return nil, err
	}
	return gp, nil
}

// resolveGrants resolves the write grants, then the read grants, into
// gp.grants, each once; a path granted both ways is kept as a write
// grant only.
func (pl *grantPlanner) resolveGrants() error {
	g := &pl.gp.grants
	for _, p := range pl.s.WritePaths {
		r, err := pl.resolve(p, true)
		if err != nil {
			return err
		}
		if !slices.Contains(g.Write, r) {
			g.Write = append(g.Write, r)
		}
	}
	for _, p := range pl.s.ReadPaths {
		r, err := pl.resolve(p, false)
		if err != nil {
			return err
		}
		if !slices.Contains(g.Read, r) && !slices.Contains(g.Write, r) {
			g.Read = append(g.Read, r)
		}
	}
	return nil
}

// planCwd resolves Sandbox.Cwd, which must be a folder (or one the run
// would make) inside a grant, into gp.grants.Cwd.
func (pl *grantPlanner) planCwd() error {
	s, gp := pl.s, pl.gp
	if s.Cwd == "" {
		return nil
	}
	abs, err := filepath.Abs(s.Cwd)
	typedCwd := abs
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
		if r, ok := gp.toMake[typedCwd]; ok && errors.Is(err, fs.ErrNotExist) {
			abs, err = r, nil // a folder the run would make
		} else if errors.Is(err, fs.ErrNotExist) {
			err = missingBelowMade(typedCwd, gp.toMake, err)
		}
	}
	if err != nil {
		return fmt.Errorf("%w: --cwd %s: %v", ErrBadConfig, s.Cwd, err)
	}
	if st, err := os.Stat(abs); (err != nil || !st.IsDir()) && !slices.Contains(slices.Collect(maps.Values(gp.toMake)), abs) {
		return fmt.Errorf("%w: --cwd %s is not a folder", ErrBadConfig, s.Cwd)
	}
	inside := func(g string) bool { return abs == g || pathUnder(abs, g) }
	if !slices.ContainsFunc(gp.grants.Read, inside) && !slices.ContainsFunc(gp.grants.Write, inside) {
		return fmt.Errorf("%w: --cwd %s is not inside a --read or --write grant", ErrBadConfig, s.Cwd)
	}
	gp.grants.Cwd = abs
	pl.typed = append(pl.typed, typedPath{"--cwd", filepath.Clean(typedCwd), abs})
	return nil
}

// planMasks lists in gp.grants.Masked the deny entries inside read
// grants (write grants hold none, except those AllowDenied exempted:
// planReadOnly), refusing a deny entry by another name mounted inside a
// grant (Aliases.CheckSubmounts) and a working directory in a masked entry.
func (pl *grantPlanner) planMasks() error {
	gp := pl.gp
	for _, r := range gp.grants.Read {
		for _, m := range append(pl.deny.MatchesUnder(r, pl.allowed), pl.alias.Inside(r)...) {
			if _, err := os.Lstat(m); err == nil && !slices.Contains(gp.grants.Masked, m) {
				gp.grants.Masked = append(gp.grants.Masked, m)
			}
		}
	}
	if err := pl.s.planReadOnly(gp, pl.deny, pl.allowed); err != nil {
		return err
	}
	sort.Strings(gp.grants.Masked)
	if err := pl.alias.CheckSubmounts(gp.grants.Read, gp.grants.Write, gp.grants.Masked); err != nil {
		return err
	}
	// Refused here, with the reason, rather than by the exec failing in
	// a folder the script may not enter.
	for _, m := range gp.grants.Masked {
		if c := gp.grants.Cwd; c == m || pathUnder(c, m) {
			return fmt.Errorf("%w: --cwd %s lies in %s, which is on the deny list and hidden from the script", ErrBadConfig, pl.s.Cwd, m)
		}
	}
	return nil
}

// planMounts sets the mounts, the Landlock rules and the reach of the
// resolved grants: write grants whole, read grants spelled out around
// their masked entries (readRules), mounts parents first.
func (gp *grantPlan) planMounts() error {
	for _, w := range gp.grants.Write {
		id := gp.ids[w]
		gp.mounts = append(gp.mounts, stageconfig.GrantMount{Path: w, Write: true, Dev: id[0], Ino: id[1]})
		gp.rules = append(gp.rules, stageconfig.GrantRule{Path: w, Access: "rw"})
		gp.reach[w] = "rw"
	}
	for _, r := range gp.grants.Read {
		id := gp.ids[r]
		gp.mounts = append(gp.mounts, stageconfig.GrantMount{Path: r, Dev: id[0], Ino: id[1]})
		gp.reach[r] = "r"
		rules, err := readRules(r, gp.grants.Masked, maxGrantRules-len(gp.rules))
		if err != nil {
			return err
		}
		gp.rules = append(gp.rules, rules...)
	}
	if c := gp.grants.Cwd; c != "" && gp.reach[c] == "" {
		gp.reach[c] = "x" // the script starts there
	}
	// Parents first, so that a grant inside another is mounted on top.
	sort.SliceStable(gp.mounts, func(i, j int) bool {
		return strings.Count(gp.mounts[i].Path, "/") < strings.Count(gp.mounts[j].Path, "/")
	})
	return nil
}

// maskMounts returns the masked entries as the init stage masks them
// (maskDenied): each at its path with the folders above it resolved, since
// the init stage follows no symlink and a mask belongs on what the path
// leads to, and with the device and inode it has now, which the init stage
// checks again before mounting the mask. Entries gone since are left out.
// Two entries that are the same folder or symlink seen through the same
// mount mean the names were being swapped while they were looked at (a
// folder has one name in a mount): the secret may then sit under a name
// seen as the symlink, unmasked, and the run is refused. Through two
// mounts (a bind mount of /home, see grants.FindAliases) they are one file under
// two names, each masked.
func maskMounts(masked []string) ([]stageconfig.GrantMount, error) {
	var out []stageconfig.GrantMount
	seen := map[[3]uint64]string{}
	for _, m := range masked {
		dir, err := filepath.EvalSymlinks(filepath.Dir(m))
		if err != nil {
			continue
		}
		p := filepath.Join(dir, filepath.Base(m))
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		id := fileIDOf(st)
		key := [3]uint64{id[0], id[1], mountIDOf(p)}
		if other, ok := seen[key]; ok && other == p {
			continue // one entry under two names through a symlinked folder (~/.config -> dotfiles/config)
		} else if ok && !st.Mode().IsRegular() && id != [2]uint64{} {
			return nil, fmt.Errorf("%w: %s and %s on the deny list are the same file: they were being swapped while checked; refused", ErrBadConfig, other, p)
		}
		seen[key] = p
		out = append(out, stageconfig.GrantMount{Path: p, Dev: id[0], Ino: id[1]})
	}
	return out, nil
}

// readRules returns the Landlock rules of read grant r. Landlock cannot
// subtract, so when masked entries lie inside r the grant is spelled out:
// every child of r that is not masked and holds no masked entry is
// granted whole; folders holding one are granted for listing only and
// descended into. Symlinks are left out: what they point to is granted or
// not on its own.
func readRules(r string, masked []string, budget int) ([]stageconfig.GrantRule, error) {
	var inside []string
	for _, m := range masked {
		if pathUnder(m, r) {
			inside = append(inside, m)
		}
	}
	if len(inside) == 0 {
		return []stageconfig.GrantRule{{Path: r, Access: "r"}}, nil
	}
	rules := []stageconfig.GrantRule{{Path: r, Access: "l"}}
	ents, err := os.ReadDir(r)
	if err != nil {
		return nil, fmt.Errorf("%w: --read %s: %v", ErrBadConfig, r, err)
	}
	for _, e := range ents {
		c := filepath.Join(r, e.Name())
		switch {
		case slices.Contains(inside, c), e.Type()&fs.ModeSymlink != 0:
			continue
		case slices.ContainsFunc(inside, func(m string) bool { return pathUnder(m, c) }):
			sub, err := readRules(c, inside, budget-len(rules))
			if err != nil {
				return nil, err
			}
			rules = append(rules, sub...)
		default:
			rules = append(rules, stageconfig.GrantRule{Path: c, Access: "r"})
		}
		if len(rules) > budget {
			return nil, fmt.Errorf("%w: --read %s holds a denied entry and too many files beside it to grant one by one (over %d); grant subfolders instead", ErrBadConfig, r, maxGrantRules)
		}
	}
	return rules, nil
}

// pathUnder reports whether p lies strictly inside dir (grants.PathUnder).
func pathUnder(p, dir string) bool { return grants.PathUnder(p, dir) }

// unreachableError is a path the sandbox identity cannot reach through the
// host's folders (a root caller's sandbox runs as nobody). It wraps
// ErrBadConfig. Run hands such a folder over when it can (handOver) and
// returns this error when it cannot.
type unreachableError struct {
	path string
	uid  int
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("%v: %s is not readable by %s the identity the sandbox runs as (make it and its parent folders world-readable, e.g. chmod o+rx)", ErrBadConfig, e.path, identityName(e.uid))
}

func (e *unreachableError) Unwrap() error { return ErrBadConfig }

// checkSkillGrants refuses a write grant that holds the skill folder or
// lies inside it: the script could rewrite the skill (the next run would
// execute the change), and the skill folder is read-only by design.
func checkSkillGrants(skill string, write []string) error {
	for _, w := range write {
		if w == skill || pathUnder(skill, w) || pathUnder(w, skill) {
			return fmt.Errorf("%w: --write %s overlaps the skill folder %s, which stays read-only; grant a folder outside it", ErrBadConfig, w, skill)
		}
	}
	return nil
}
