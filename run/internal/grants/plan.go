package grants

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
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// Grants are the host paths a run may use besides its skill and work
// folders, resolved (absolute, symlinks resolved); run.Grants, which run
// records in its Result, has the same fields.
type Grants struct {
	Read  []string // files and folders the script may read
	Write []string // folders the script may create and change files in
	Cwd   string   // the script's working directory when Request.Cwd is set
	// Created lists the Write folders the plan created because they were
	// missing.
	Created []string
	// Masked lists the deny-list entries found inside Read grants (and
	// inside Write grants exempted by AllowDenied), hidden from the script.
	Masked []string
	// ReadOnly lists the Request.ReadOnly paths that lie inside Write
	// grants: the script reads them but cannot change them.
	ReadOnly []string
	// Autorun lists the files and folders inside Write grants that the
	// caller's tools run on their own (.git, .envrc, .vscode, ...: see
	// docs/grants.md), kept read-only; AutorunWritable the Write grants
	// exempted (Request.AutorunWritable).
	Autorun         []string
	AutorunWritable []string
}

// Request is what a run asks of the grants, as run.Sandbox gives it,
// with what the plan needs to know of the run and the host.
type Request struct {
	Read, Write []string // the grants as given (run.Sandbox.ReadPaths, WritePaths)
	Cwd         string   // the script's working directory as given, or ""
	// ReadOnly, AllowDenied and AutorunWritable are run.Sandbox's
	// ReadOnlyPaths, AllowDenied and AutorunWritable.
	ReadOnly, AllowDenied, AutorunWritable []string
	Deny                                   []string // the deny list: the defaults and the caller's own
	// Sockets are the read grants that may be unix sockets rather than
	// regular files (run.Sandbox.AllowUnix, as given).
	Sockets []string
	Skill   string // the skill folder, resolved; "" skips the overlap check
	// Dry makes no folder: a missing write folder is only checked as the
	// folder the run would make (Plan.ToMake).
	Dry bool
	// MountNS is set when the run will have a mount namespace, so that a
	// folder made may be handed over id-mapped (MapWrite).
	MountNS bool
	// UID and GID are the run's host identity, which gets the folders
	// made that cannot be handed over id-mapped.
	UID, GID int
	// Nominal is the sandbox identity a root caller's grants are checked
	// for planted symlinks against (negative, or the caller's own: no
	// check); Planted reports whether a symlink owner is that identity or
	// a run's own id, which RunIDs (first and last) names in the refusal.
	Nominal int
	Planted func(owner uint32) bool
	RunIDs  [2]int
	// MapWrite reports whether a write folder made in parent would be
	// handed over id-mapped (run's canMapWrite); Writable whether the
	// caller may make a folder in dir (a dry run's check).
	MapWrite func(parent string) bool
	Writable func(dir string) error
}

// maxGrantRules bounds the Landlock rules one run's grants may need (a
// read grant holding a denied entry is granted child by child).
const maxGrantRules = 4096

// Plan is what the supervisor decided about a run's grants.
type Plan struct {
	Grants Grants
	Mounts []stageconfig.GrantMount // parents before children
	Rules  []stageconfig.GrantRule
	// Reach lists each grant with the access the sandbox identity needs
	// on it ("r" or "rw"; "x" for the working directory), for the
	// permission check.
	Reach map[string]string
	// IDs holds the device and inode of each resolved grant, as checked.
	IDs map[string][2]uint64
	// ReadOnly are the read-only parts of write grants, mounted read-only
	// on themselves after the grants; maskedInWrite the deny entries
	// masked inside write grants. MountOnly, when set, is why a run
	// without a mount namespace, the only layer that keeps them, is
	// refused (see planReadOnly); run reports it as ErrIsolation.
	ReadOnly      []stageconfig.GrantMount
	maskedInWrite []string
	MountOnly     string
	// Autorun maps the auto-run entries of write grants that existed when
	// the run was planned to their inodes; SweepAutorun lists the write
	// grants whose new auto-run entries are quarantined after the run
	// (see planAutorun).
	Autorun      map[string]uint64
	SweepAutorun []string
	// Made lists the folders the plan created for missing write grants
	// (parents before children), so that a run refused before its script
	// started can remove them again (RemoveMade).
	Made []string
	// Aliases are the grants typed through a symlink that the init
	// process re-creates at the path as typed (see planAliases).
	Aliases []stageconfig.GrantAlias
	// ToMake, in a dry run, maps each folder a run would create for a
	// missing write grant (the grant and the parents made for it, as
	// given) to the path it would have once made.
	ToMake map[string]string
}

// New resolves and checks the grants of r. Relative paths are resolved
// against the process's working directory; missing write folders are
// created (and listed in Created), unless r.Dry is set: they are then only
// checked as the folders that would be made (Plan.ToMake). A write grant
// may not overlap the skill folder. A refused plan removes the folders it
// made.
func New(r Request) (_ *Plan, err error) {
	gp := &Plan{Reach: map[string]string{}, IDs: map[string][2]uint64{}, ToMake: map[string]string{}}
	defer func() {
		if err != nil { // a refused run leaves nothing behind
			RemoveMade(gp.Made)
		}
	}()
	if len(r.Read) == 0 && len(r.Write) == 0 && r.Cwd == "" {
		return gp, nil // ReadOnly can only narrow write grants
	}
	allowed, err := allowedPaths(r.AllowDenied)
	if err != nil {
		return nil, err
	}
	deny := denylist.New(r.Deny, denylist.HomeFolders(), allowed)
	pl := &planner{r: &r, gp: gp, deny: deny, alias: FindDenyAliases(deny, allowed), allowed: allowed}
	if err := pl.resolveGrants(); err != nil {
		return nil, err
	}
	if err := pl.planCwd(); err != nil {
		return nil, err
	}
	if err := gp.planAliases(r.Skill, pl.typed); err != nil {
		return nil, err
	}
	if err := pl.planMasks(); err != nil {
		return nil, err
	}
	if err := gp.planMounts(); err != nil {
		return nil, err
	}
	for i := range gp.Mounts {
		gp.Mounts[i].Submounts = pl.alias.HoldsMounts(gp.Mounts[i].Path)
	}
	return gp, nil
}

// resolveGrants resolves the write grants, then the read grants, into
// gp.Grants, each once; a path granted both ways is kept as a write
// grant only.
func (pl *planner) resolveGrants() error {
	g := &pl.gp.Grants
	for _, p := range pl.r.Write {
		r, err := pl.resolve(p, true)
		if err != nil {
			return err
		}
		if !slices.Contains(g.Write, r) {
			g.Write = append(g.Write, r)
		}
	}
	for _, p := range pl.r.Read {
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

// planCwd resolves Request.Cwd, which must be a folder (or one the run
// would make) inside a grant, into gp.Grants.Cwd.
func (pl *planner) planCwd() error {
	r, gp := pl.r, pl.gp
	if r.Cwd == "" {
		return nil
	}
	abs, err := filepath.Abs(r.Cwd)
	typedCwd := abs
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
		if r, ok := gp.ToMake[typedCwd]; ok && errors.Is(err, fs.ErrNotExist) {
			abs, err = r, nil // a folder the run would make
		} else if errors.Is(err, fs.ErrNotExist) {
			err = missingBelowMade(typedCwd, gp.ToMake, err)
		}
	}
	if err != nil {
		return fmt.Errorf("%w: --cwd %s: %v", stageconfig.ErrBadConfig, r.Cwd, err)
	}
	if st, err := os.Stat(abs); (err != nil || !st.IsDir()) && !slices.Contains(slices.Collect(maps.Values(gp.ToMake)), abs) {
		return fmt.Errorf("%w: --cwd %s is not a folder", stageconfig.ErrBadConfig, r.Cwd)
	}
	inside := func(g string) bool { return abs == g || PathUnder(abs, g) }
	if !slices.ContainsFunc(gp.Grants.Read, inside) && !slices.ContainsFunc(gp.Grants.Write, inside) {
		return fmt.Errorf("%w: --cwd %s is not inside a --read or --write grant", stageconfig.ErrBadConfig, r.Cwd)
	}
	gp.Grants.Cwd = abs
	pl.typed = append(pl.typed, typedPath{"--cwd", filepath.Clean(typedCwd), abs})
	return nil
}

// planMasks lists in gp.Grants.Masked the deny entries inside read
// grants (write grants hold none, except those AllowDenied exempted:
// planReadOnly), refusing a deny entry by another name mounted inside a
// grant (DenyAliases.CheckSubmounts) and a working directory in a masked entry.
func (pl *planner) planMasks() error {
	gp := pl.gp
	for _, r := range gp.Grants.Read {
		for _, m := range append(pl.deny.MatchesUnder(r, pl.allowed), pl.alias.Inside(r)...) {
			if _, err := os.Lstat(m); err == nil && !slices.Contains(gp.Grants.Masked, m) {
				gp.Grants.Masked = append(gp.Grants.Masked, m)
			}
		}
	}
	if err := pl.planReadOnly(); err != nil {
		return err
	}
	sort.Strings(gp.Grants.Masked)
	if err := pl.alias.CheckSubmounts(gp.Grants.Read, gp.Grants.Write, gp.Grants.Masked); err != nil {
		return err
	}
	// Refused here, with the reason, rather than by the exec failing in
	// a folder the script may not enter.
	for _, m := range gp.Grants.Masked {
		if c := gp.Grants.Cwd; c == m || PathUnder(c, m) {
			return fmt.Errorf("%w: --cwd %s lies in %s, which is on the deny list and hidden from the script", stageconfig.ErrBadConfig, pl.r.Cwd, m)
		}
	}
	return nil
}

// planMounts sets the mounts, the Landlock rules and the reach of the
// resolved grants: write grants whole, read grants spelled out around
// their masked entries (readRules), mounts parents first.
func (gp *Plan) planMounts() error {
	for _, w := range gp.Grants.Write {
		id := gp.IDs[w]
		gp.Mounts = append(gp.Mounts, stageconfig.GrantMount{Path: w, Write: true, Dev: id[0], Ino: id[1]})
		gp.Rules = append(gp.Rules, stageconfig.GrantRule{Path: w, Access: "rw"})
		gp.Reach[w] = "rw"
	}
	for _, r := range gp.Grants.Read {
		id := gp.IDs[r]
		gp.Mounts = append(gp.Mounts, stageconfig.GrantMount{Path: r, Dev: id[0], Ino: id[1]})
		gp.Reach[r] = "r"
		rules, err := readRules(r, gp.Grants.Masked, maxGrantRules-len(gp.Rules))
		if err != nil {
			return err
		}
		gp.Rules = append(gp.Rules, rules...)
	}
	if c := gp.Grants.Cwd; c != "" && gp.Reach[c] == "" {
		gp.Reach[c] = "x" // the script starts there
	}
	// Parents first, so that a grant inside another is mounted on top.
	sort.SliceStable(gp.Mounts, func(i, j int) bool {
		return strings.Count(gp.Mounts[i].Path, "/") < strings.Count(gp.Mounts[j].Path, "/")
	})
	return nil
}

// MaskMounts returns the masked entries as the init process masks them:
// each at its path with the folders above it resolved, since the init
// process follows no symlink and a mask belongs on what the path leads
// to, and with the device and inode it has now, which the init process
// checks again before mounting the mask. Entries gone since are left out.
// Two entries that are the same folder or symlink seen through the same
// mount mean the names were being swapped while they were looked at (a
// folder has one name in a mount): the secret may then sit under a name
// seen as the symlink, unmasked, and the run is refused. Through two
// mounts (a bind mount of /home, see FindDenyAliases) they are one file
// under two names, each masked.
func MaskMounts(masked []string) ([]stageconfig.GrantMount, error) {
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
			return nil, fmt.Errorf("%w: %s and %s on the deny list are the same file: they were being swapped while checked; refused", stageconfig.ErrBadConfig, other, p)
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
		if PathUnder(m, r) {
			inside = append(inside, m)
		}
	}
	if len(inside) == 0 {
		return []stageconfig.GrantRule{{Path: r, Access: "r"}}, nil
	}
	rules := []stageconfig.GrantRule{{Path: r, Access: "l"}}
	ents, err := os.ReadDir(r)
	if err != nil {
		return nil, fmt.Errorf("%w: --read %s: %v", stageconfig.ErrBadConfig, r, err)
	}
	for _, e := range ents {
		c := filepath.Join(r, e.Name())
		switch {
		case slices.Contains(inside, c), e.Type()&fs.ModeSymlink != 0:
			continue
		case slices.ContainsFunc(inside, func(m string) bool { return PathUnder(m, c) }):
			sub, err := readRules(c, inside, budget-len(rules))
			if err != nil {
				return nil, err
			}
			rules = append(rules, sub...)
		default:
			rules = append(rules, stageconfig.GrantRule{Path: c, Access: "r"})
		}
		if len(rules) > budget {
			return nil, fmt.Errorf("%w: --read %s holds a denied entry and too many files beside it to grant one by one (over %d); grant subfolders instead", stageconfig.ErrBadConfig, r, maxGrantRules)
		}
	}
	return rules, nil
}

// MarkExec makes the read grants of the interpreters' environments
// (roots, as run's interpreterRoots returns them) executable: their mounts
// without noexec, their Landlock rules with execute.
func (gp *Plan) MarkExec(roots []string) {
	for _, root := range roots {
		r, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue // New has refused it already
		}
		for i := range gp.Mounts {
			if gp.Mounts[i].Path == r && !gp.Mounts[i].Write {
				gp.Mounts[i].Exec = true
			}
		}
		for i := range gp.Rules {
			if p := gp.Rules[i].Path; gp.Rules[i].Access == "r" && (p == r || PathUnder(p, r)) {
				gp.Rules[i].Access = "rx"
			}
		}
	}
}

// checkSkillGrants refuses a write grant that holds the skill folder or
// lies inside it: the script could rewrite the skill (the next run would
// execute the change), and the skill folder is read-only by design.
func checkSkillGrants(skill string, write []string) error {
	for _, w := range write {
		if w == skill || PathUnder(skill, w) || PathUnder(w, skill) {
			return fmt.Errorf("%w: --write %s overlaps the skill folder %s, which stays read-only; grant a folder outside it", stageconfig.ErrBadConfig, w, skill)
		}
	}
	return nil
}
