package serve

import (
	"fmt"
	"sync"

	"github.com/skill-sandbox/skill-sandbox/mcp"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// tenant is everything the server keeps for one tenant: what its tokens
// grant and its executions. It is the one place per-tenant state lives;
// its MCP endpoint (mcp.go) is here too.
type tenant struct {
	name       string
	skillDirs  []string
	policyFile string
	policy     *policy.Policy   // nil: none
	mcp        *mcp.HTTPHandler // its MCP endpoint (mcp.go)
	// uploads bounds the tenant's request bodies read at once (see
	// tenantUploads).
	uploads chan struct{}

	mu    sync.Mutex
	execs map[string]*execution // by id
	order []string              // ids, oldest first
}

// newTenant loads the policy file of a tenant's first token.
func newTenant(t Token) (*tenant, error) {
	tn := &tenant{name: t.Tenant, skillDirs: t.Skills, policyFile: t.Policy, execs: map[string]*execution{}}
	if t.Policy != "" {
		op, err := policy.ParseFile(t.Policy)
		if err != nil {
			return nil, fmt.Errorf("tenant %s: %w", t.Tenant, err)
		}
		tn.policy = op
	}
	return tn, nil
}

// sandboxFor returns the sandbox of one run of the tenant in dir: the
// template with the policy resolved for dir applied (the command line's
// flags, the tenant's policy and, when request is set, the skill's
// request file read from requestDir, which may only lower limits). A
// request for more than is granted refuses the run, wrapping
// run.ErrBadConfig.
func (s *Server) sandboxFor(tn *tenant, dir, requestDir string, request bool) (run.Sandbox, error) {
	return policy.SandboxFor(s.cfg.Sandbox, s.cfg.Flags, tn.policy, dir, requestDir, request)
}

// add stores a new execution, deleting the oldest finished ones past the
// tenant's bounds: keep executions, keepMemory bytes of answers.
func (tn *tenant) add(e *execution, keep int, keepMemory int64) []*execution {
	tn.mu.Lock()
	defer tn.mu.Unlock()
	tn.execs[e.id] = e
	tn.order = append(tn.order, e.id)
	return tn.evict(nil, (*execution).memory, func(n int, held int64) bool { return n > keep || held > keepMemory })
}

// evict removes the oldest finished executions other than spare while
// over(executions kept, the sum of their cost) holds; tn.mu is held.
func (tn *tenant) evict(spare *execution, cost func(*execution) int64, over func(int, int64) bool) []*execution {
	var held int64
	for _, id := range tn.order {
		held += cost(tn.execs[id])
	}
	var removed []*execution
	for i := 0; over(len(tn.order), held) && i < len(tn.order); {
		old := tn.execs[tn.order[i]]
		if old == spare || !old.isFinished() {
			i++
			continue
		}
		held -= cost(old)
		removed = append(removed, old)
		delete(tn.execs, old.id)
		tn.order = append(tn.order[:i], tn.order[i+1:]...)
	}
	return removed
}

// get returns the tenant's execution id, or nil.
func (tn *tenant) get(id string) *execution {
	tn.mu.Lock()
	defer tn.mu.Unlock()
	return tn.execs[id]
}

// expire removes the finished executions that ended before cutoff.
func (tn *tenant) expire(cutoff func(*execution) bool) []*execution {
	tn.mu.Lock()
	defer tn.mu.Unlock()
	var removed []*execution
	kept := tn.order[:0]
	for _, id := range tn.order {
		e := tn.execs[id]
		if cutoff(e) {
			removed = append(removed, e)
			delete(tn.execs, id)
			continue
		}
		kept = append(kept, id)
	}
	tn.order = kept
	return removed
}
