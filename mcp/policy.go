package mcp

import (
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// sandboxFor returns the sandbox of one run in dir: the template of
// Config.Sandbox with the policy resolved for dir applied (the command
// line's Config.Flags, the operator's Config.Policy and, when request is
// set, the skill's own request file, which may only lower limits). A
// request for more than is granted refuses the run, wrapping
// run.ErrBadConfig. The request file is read from requestDir, dir itself
// or a verified copy of it (a path the request names inside dir stays
// inside the skill).
func (s *Server) sandboxFor(dir, requestDir string, request bool) (run.Sandbox, error) {
	return policy.SandboxFor(s.cfg.Sandbox, s.cfg.Flags, s.cfg.Policy, dir, requestDir, request)
}
