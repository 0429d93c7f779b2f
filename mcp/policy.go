package mcp

import (
	"fmt"
	"os"

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
	sb := s.cfg.Sandbox
	var req *policy.Policy
	if request {
		var err error
		if req, err = policy.LoadRequest(requestDir); err != nil {
			return sb, fmt.Errorf("%w: %v", run.ErrBadConfig, err)
		}
	}
	flags := s.cfg.Flags
	// The template's RequireIsolation is the command line's
	// --require-isolation; policy.Resolve makes it win over allow_degraded.
	flags.RequireIsolation = flags.RequireIsolation || sb.RequireIsolation
	resolved, err := policy.Resolve(flags, s.cfg.Policy, req, dir)
	if err != nil {
		return sb, fmt.Errorf("%w: policy: %v", run.ErrBadConfig, err)
	}
	resolved.Apply(&sb, os.LookupEnv)
	return sb, nil
}
