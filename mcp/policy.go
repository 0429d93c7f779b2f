package mcp

import (
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/sign"
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
	return s.sandboxForTrust(dir, requestDir, request, false)
}

// sandboxForTrust is sandboxFor for a skill whose signature was checked
// good when signed is set: the operator policy's [backend] signed rule
// applies to it.
func (s *Server) sandboxForTrust(dir, requestDir string, request, signed bool) (run.Sandbox, error) {
	flags := s.cfg.Flags
	flags.Signed = signed
	return policy.SandboxFor(s.cfg.Sandbox, flags, s.cfg.Policy, dir, requestDir, request)
}

// backendSigners is the allowed_signers file of the operator policy's
// [backend] signed rule, when a skill's signature would choose its
// backend (no --backend overrides the rule); "" otherwise.
func (s *Server) backendSigners() string {
	op := s.cfg.Policy
	if op == nil || op.Backend.Signed == "" || s.cfg.Flags.Backend != "" {
		return ""
	}
	return op.Signature.AllowedSigners
}

// checkSignedBackend checks the signature of the skill at path against
// signers for the [backend] signed rule, never refusing: a good one
// makes c signed and returns the verified copy to run (remove deletes
// it once the run is over); anything else leaves the skill unsigned, on
// the policy's default backend, the stronger wall, with a warning.
func (s *Server) checkSignedBackend(c *runCall, path, signers string) (dir string, remove func()) {
	signer, verified, remove, err := sign.VerifyCached(path, signers,
		sign.DefaultVerifiedCacheDir(), sign.Options{Cache: s.digests, Recorded: c.meta.SkillDigest})
	if err != nil {
		if w := s.warnings(c.meta.RequestID); w != nil {
			fmt.Fprintf(w, "skill-sandbox: notice: %s counts as unsigned for [backend]: %v\n", path, err)
		}
		return path, remove
	}
	c.signed = true
	c.meta.Signature = audit.SignatureOf(false, signer)
	return verified, remove
}
