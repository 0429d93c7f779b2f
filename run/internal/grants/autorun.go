package grants

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/autorun"
	"github.com/skill-sandbox/skill-sandbox/run/internal/artifacts"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// maxAutorunPaths bounds the auto-run files kept read-only in one run's
// write grants: each is a mount (and pins the folders above it).
const maxAutorunPaths = 256

// planAutorun finds, in each write grant that AutorunWritable does not
// name, the files the caller's tools run on their own (autorun.Matches) that
// exist now, and adds each regular file and folder among them to the
// read-only parts of the grant (gp.ReadOnly), which the init process
// mounts read-only on themselves: the kernel keeps them, and a mount
// point can be neither renamed nor removed (EBUSY). Those the script
// creates are quarantined when the run is over (artifacts.Sweep). The
// existing ones are listed in Grants.Autorun, the exempted grants in
// Grants.AutorunWritable.
func (pl *planner) planAutorun() error {
	gp := pl.gp
	writable := map[string]bool{}
	for _, p := range pl.r.AutorunWritable {
		abs, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("%w: --allow-autorun %s: %v", stageconfig.ErrBadConfig, p, err)
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		if !slices.Contains(gp.Grants.Write, abs) && !slices.Contains(mapValues(gp.ToMake), abs) {
			return fmt.Errorf("%w: --allow-autorun %s is not a --write grant (name the granted folder exactly)", stageconfig.ErrBadConfig, p)
		}
		writable[abs] = true
	}
	gp.Autorun = map[string]uint64{}
	for _, w := range gp.Grants.Write {
		if writable[w] {
			gp.Grants.AutorunWritable = append(gp.Grants.AutorunWritable, w)
			continue
		}
		if inAutorun(w) {
			return fmt.Errorf("%w: --write %s lies in a folder that tools run files from on their own; grant it with --allow-autorun %s if the script may change what they run", stageconfig.ErrBadConfig, w, w)
		}
		gp.SweepAutorun = append(gp.SweepAutorun, w)
		if !mountGrants {
			continue // no mount namespace to keep them: see docs/grants.md
		}
		found, err := FindAutorun(w, maxAutorunPaths)
		if err != nil {
			return fmt.Errorf("%w: --write %s: looking for files that tools run on their own: %v (grant a smaller folder, or keep them writable with --allow-autorun %s)", stageconfig.ErrBadConfig, w, err, w)
		}
		for _, f := range found {
			gp.Autorun[f.Path] = f.Ino
			if f.Mount && !slices.ContainsFunc(gp.ReadOnly, func(m stageconfig.GrantMount) bool { return m.Path == f.Path || PathUnder(f.Path, m.Path) }) {
				gp.ReadOnly = append(gp.ReadOnly, f.GrantMount)
				gp.Grants.Autorun = append(gp.Grants.Autorun, f.Path)
			}
		}
	}
	if len(gp.Grants.Autorun) > maxAutorunPaths {
		return fmt.Errorf("%w: the write grants hold %d or more files that tools run on their own (.git, .envrc, .vscode, ...), more than %d; grant smaller folders, or keep them writable with --allow-autorun", stageconfig.ErrBadConfig, len(gp.Grants.Autorun), maxAutorunPaths)
	}
	return nil
}

// inAutorun reports whether the absolute path p is, or lies in, an entry
// autorun.Matches matches (a grant of a project's .git or .vscode) or a folder
// with a git folder's shape (artifacts.GitDirPath: a bare repository).
func inAutorun(p string) bool {
	for {
		if autorun.Matches(filepath.Base(p)) || artifacts.GitDirPath(p) {
			return true
		}
		up := filepath.Dir(p)
		if up == p {
			return false
		}
		p = up
	}
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
