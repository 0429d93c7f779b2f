package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// errBusy marks a prepare_skill call refused because another build is
// under way.
var errBusy = errors.New("another prepare_skill build is under way: call again when it is over")

// useEnvironment gives the run of the skill folder dir its prepared
// environments, as skill-sandbox run does: read-only, their
// interpreters first on PATH (and a Node one's node_modules). A skill
// whose environment is not prepared, or whose requirements are refused,
// runs without it (a warning goes to the log);
// one whose environment changed since it was built is refused. release
// (never nil) ends its use: the cache may evict it after.
func (s *Server) useEnvironment(c *runCall, sb *run.Sandbox, dir string) (release func(), err error) {
	if s.cfg.Environments.Dir == "" {
		return func() {}, nil
	}
	envs, st, release := s.cfg.Environments.ForSkill(dir, s.python, s.node)
	if st == nil {
		return release, nil
	}
	if ch := st.Changed(); ch != nil {
		return release, fmt.Errorf("%w: %s; the operator must prepare the skill again (skill-sandbox prepare %s)%s",
			run.ErrBadConfig, ch.Detail, c.meta.SkillPath, s.prepareHint())
	}
	c.meta.Environment, c.meta.NodeEnvironment = prepare.Give(sb, envs)
	if w := s.warnings(c.meta.RequestID); w != nil {
		for e := st; e != nil; e = e.Node {
			if e.State != prepare.StatePrepared {
				fmt.Fprintf(w, "warning: %s: running with the host's packages\n", e.Detail)
			}
		}
	}
	return release, nil
}

// prepareHint names prepare_skill when agents may use it.
func (s *Server) prepareHint() string {
	if s.cfg.AllowPrepare {
		return ", or call " + ToolPrepareSkill
	}
	return ""
}

// environmentStatus is the state of the skill at dir's environment for
// list_skills: nil when the skill declares no requirement, or the server
// keeps no environments.
func (s *Server) environmentStatus(dir string) *prepare.Status {
	if s.cfg.Environments.Dir == "" {
		return nil
	}
	_, st, release := s.cfg.Environments.ForSkill(dir, s.python, s.node)
	release()
	return st
}

// toolPrepareSkill builds a listed skill's environment (prepare_skill,
// offered only with Config.AllowPrepare): pip in the sandbox with the
// operator's index and limits, one build at a time, holding a run slot.
func (s *Server) toolPrepareSkill(ctx context.Context, info callInfo, raw json.RawMessage) map[string]any {
	c := s.newRunCall(info, ToolPrepareSkill)
	var a struct {
		Skill string `json:"skill"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return s.refuse(c, fmt.Errorf("%w: %v", errArguments, err))
	}
	if a.Skill == "" {
		return s.refuse(c, fmt.Errorf(`%w: "skill" is required`, errArguments))
	}
	sk, err := s.lookup(a.Skill)
	if err != nil {
		return s.refuse(c, fmt.Errorf("%w: %v", errArguments, err))
	}
	c.meta.SkillPath = sk.Path
	dir, remove, err := s.verified(c, sk)
	defer remove()
	if err != nil {
		return s.refuse(c, err)
	}
	select {
	case s.prepares <- struct{}{}:
		defer func() { <-s.prepares }()
	default:
		return s.refuse(c, errBusy)
	}
	select {
	case s.runs <- struct{}{}:
		defer func() { <-s.runs }()
	case <-ctx.Done():
		return s.refuse(c, ctx.Err())
	}
	env, res, err := s.build(ctx, c, dir)
	if env != nil {
		c.meta.Environment = &audit.Environment{Key: env.Key, Digest: env.Digest, Path: env.Dir, Built: res != nil}
		if res != nil {
			for _, p := range env.Installed {
				c.meta.Environment.Installed = append(c.meta.Environment.Installed, audit.EnvironmentPackage(p))
			}
		}
	}
	c.meta.NoRun = res == nil
	return s.finish(c, res, err)
}

// build builds the environment of the skill folder dir unless it is
// prepared; res is pip's run when it ran.
func (s *Server) build(ctx context.Context, c *runCall, dir string) (*prepare.Env, *run.Result, error) {
	envs, st, release := s.cfg.Environments.ForSkill(dir, s.python, s.node)
	release() // Build replaces it only when it fails its check
	switch {
	case st == nil:
		return nil, nil, fmt.Errorf("%w: the skill declares no requirements (requirements.txt, pyproject.toml): nothing to prepare", errArguments)
	case st.State == prepare.StatePrepared:
		// The Python one when there are both (its state is st's): the
		// Node one is the operator's to build.
		return envs[0], nil, nil
	case st.State == prepare.StateInvalid:
		return nil, nil, fmt.Errorf("%w: %s", run.ErrBadConfig, st.Detail)
	}
	deps, err := prepare.Load(dir)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("%w: %v", run.ErrBadConfig, err)
	case deps == nil: // a Node skill: its registry is the operator's to name
		return nil, nil, fmt.Errorf("%w: %s builds Python environments only; the operator prepares a Node skill (skill-sandbox prepare %s)", run.ErrBadConfig, ToolPrepareSkill, c.meta.SkillPath)
	}
	opts := s.cfg.Prepare
	opts.Sandbox.RequestID = c.meta.RequestID
	opts.Sandbox.Stdout, opts.Sandbox.Stderr, opts.Sandbox.Stdin = nil, nil, nil
	opts.Sandbox.Warnings = s.warnings(c.meta.RequestID)
	opts.Sandbox.NetworkLog = opts.Sandbox.Warnings
	if opts.Sandbox.OutputCap == 0 {
		opts.Sandbox.OutputCap = s.cfg.Sandbox.OutputCap
	}
	// The record names the build's own limits.
	c.meta.Timeout, c.meta.MemoryLimitMB = prepare.DefaultTimeout, prepare.DefaultMemoryMB
	if opts.Sandbox.Timeout != 0 {
		c.meta.Timeout = opts.Sandbox.Timeout
	}
	if opts.Sandbox.MemoryMB != 0 {
		c.meta.MemoryLimitMB = opts.Sandbox.MemoryMB
	}
	return s.cfg.Environments.Build(ctx, deps, s.python, opts)
}
