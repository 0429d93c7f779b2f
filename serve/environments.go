package serve

import (
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// useEnvironment gives the run of the skill folder dir its prepared
// environments, as skill-sandbox run does: read-only, their
// interpreters first on PATH (and a Node one's node_modules). A skill
// whose environment is not prepared runs without it; one whose
// environment changed since it was built is refused.
// release (never nil) ends its use: the cache may evict it after.
func (s *Server) useEnvironment(sb *run.Sandbox, dir string, meta *audit.Meta) (release func(), err error) {
	if s.cfg.Environments.Dir == "" {
		return func() {}, nil
	}
	envs, st, release := s.cfg.Environments.ForSkill(dir, s.python, s.node)
	if st != nil && st.Changed() != nil {
		release()
		return func() {}, fmt.Errorf("%w: %s; the operator must prepare the skill again (skill-sandbox prepare)", run.ErrBadConfig, st.Changed().Detail)
	}
	meta.Environment, meta.NodeEnvironment = prepare.Give(sb, envs)
	return release, nil
}

// environmentStatus is the state of the skill at dir's environment for
// the skill listing: nil when it declares no requirement or the server
// keeps no environments.
func (s *Server) environmentStatus(dir string) *prepare.Status {
	if s.cfg.Environments.Dir == "" {
		return nil
	}
	_, st, release := s.cfg.Environments.ForSkill(dir, s.python, s.node)
	release()
	return st
}
