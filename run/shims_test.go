package run

import (
	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/plan"
)

// The planning's names (package plan) that run's tests use.
const (
	nobodyUID    = identity.Nobody
	sandboxPath  = plan.SandboxPath
	proxyPort    = plan.ProxyPort
	defaultShell = plan.DefaultShell
)

var (
	lookPath        = plan.LookPath
	newRequestID    = random.ID
	sandboxIdentity = plan.SandboxIdentity
	proxyVars       = plan.ProxyVars
)

// planGrants plans s's grants as Run would (plan.Request.PlanGrants).
func (s *Sandbox) planGrants(skill string, dry bool, uid, gid int) (*grants.Plan, error) {
	return s.request().PlanGrants(skill, dry, uid, gid)
}
