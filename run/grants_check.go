package run

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// CheckGrants checks the grants of s (ReadPaths, WritePaths, Cwd,
// ReadOnlyPaths, DenyPaths and AllowDenied, against SkillDir when set) as
// Run does, and returns the error Run would return for them, with the same
// message; it runs nothing and changes nothing on the host. A missing
// WritePaths folder is not created: it is checked as the folder Run would
// create (the caller must be able to make it) and listed in Created. The
// grants are returned as Run would record them in Result.Grants.
//
// Two of Run's decisions depend on the host when the run starts, and are
// taken as they would be now: a root caller's grant that uid 65534 cannot
// use passes when it can be handed over (see docs/grants.md), and a run
// refused for a missing layer is not predicted.
func (s *Sandbox) CheckGrants() (Grants, error) {
	skill := ""
	if s.SkillDir != "" {
		abs, err := filepath.Abs(s.SkillDir)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return Grants{}, fmt.Errorf("%w: %v", ErrInvalidSkill, err)
		}
		skill = abs
	}
	uid, gid := sandboxIdentity()
	gp, err := s.planGrants(skill, true, uid, gid)
	if err != nil {
		return Grants{}, err
	}
	if _, err := grants.MaskMounts(gp.Grants.Masked); err != nil {
		return Grants{}, err
	}
	// A folder Run makes belongs to the sandbox identity (grants.MakeWriteFolder):
	// it has nothing to check yet, and nothing to hand over.
	made := map[string]bool{}
	for _, r := range gp.ToMake {
		made[r] = true
		delete(gp.Reach, r)
	}
	reachErr := grants.CheckReach(uid, gid, gp.Reach)
	if reachErr != nil && !slices.Contains(s.Disable, LayerMountNS) && s.Backend != BackendGVisor {
		cfg := stageconfig.Config{}
		for _, g := range gp.Mounts {
			if !made[g.Path] {
				cfg.Grants = append(cfg.Grants, g)
			}
		}
		files, err := grants.HandOver(uid, gid, &cfg, false)
		for _, f := range files {
			f.Close()
		}
		if err != nil {
			return Grants{}, err
		}
		if len(files) > 0 {
			reachErr = nil // Run hands them over instead
		}
	}
	if reachErr != nil {
		return Grants{}, reachErr
	}
	return Grants(gp.Grants), nil
}
