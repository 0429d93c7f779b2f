package plan

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// CheckGrants is run.Sandbox.CheckGrants.
func (s *Request) CheckGrants() (grants.Grants, error) {
	skill := ""
	if s.SkillDir != "" {
		abs, err := filepath.Abs(s.SkillDir)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return grants.Grants{}, fmt.Errorf("%w: %v", ErrInvalidSkill, err)
		}
		skill = abs
	}
	uid, gid := SandboxIdentity()
	gp, err := s.PlanGrants(skill, true, uid, gid)
	if err != nil {
		return grants.Grants{}, err
	}
	if _, err := grants.MaskMounts(gp.Grants.Masked); err != nil {
		return grants.Grants{}, err
	}
	// A folder Run makes belongs to the sandbox identity (grants.MakeWriteFolder):
	// it has nothing to check yet, and nothing to hand over.
	made := map[string]bool{}
	for _, r := range gp.ToMake {
		made[r] = true
		delete(gp.Reach, r)
	}
	reachErr := grants.CheckReach(uid, gid, gp.Reach)
	if reachErr != nil && !slices.Contains(s.Disable, stageconfig.LayerMountNS) && s.Backend != BackendGVisor {
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
			return grants.Grants{}, err
		}
		if len(files) > 0 {
			reachErr = nil // Run hands them over instead
		}
	}
	if reachErr != nil {
		return grants.Grants{}, reachErr
	}
	return gp.Grants, nil
}
