package mcp

import (
	"fmt"
	"os"
	"time"

	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// sandboxFor returns the sandbox of one run in dir: the template of
// Config.Sandbox with the policy resolved for dir applied (the command
// line's Config.Flags, the operator's Config.Policy and, when request is
// set, the skill's own request file, which may only lower limits). A
// request for more than is granted refuses the run, wrapping
// run.ErrBadConfig.
func (s *Server) sandboxFor(dir string, request bool) (run.Sandbox, error) {
	sb := s.cfg.Sandbox
	var req *policy.Policy
	if request {
		var err error
		if req, err = policy.LoadRequest(dir); err != nil {
			return sb, fmt.Errorf("%w: %v", run.ErrBadConfig, err)
		}
	}
	resolved, err := policy.Resolve(s.cfg.Flags, s.cfg.Policy, req, dir)
	if err != nil {
		return sb, fmt.Errorf("%w: policy: %v", run.ErrBadConfig, err)
	}
	resolved.Apply(&sb, os.LookupEnv)
	// --require-isolation on the command line is the stricter choice and
	// wins over a policy's allow_degraded (run refuses the two together).
	if sb.RequireIsolation {
		sb.AllowDegraded = false
	}
	return sb, nil
}

// serverTimeout is the time limit the tool descriptions announce: the
// command line's, else the operator policy's, else the default. A skill's
// request file may lower it for that skill.
func (s *Server) serverTimeout() time.Duration {
	switch {
	case s.cfg.Flags.Timeout > 0:
		return s.cfg.Flags.Timeout
	case s.cfg.Policy != nil && s.cfg.Policy.Resources.Timeout > 0:
		return s.cfg.Policy.Resources.Timeout
	}
	return run.DefaultTimeout
}
