package native

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
)

// take never has an init process to give on this platform (see Pool).
func (pl *Pool) take(l *Launch, out *backend.Outcome) (*startedInit, *cgroup.Cgroup, error) {
	if pl != nil {
		pl.get(l.plan)
	}
	return nil, nil, nil
}
