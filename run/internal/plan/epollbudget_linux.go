//go:build linux && (amd64 || arm64)

package plan

import (
	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// epollBudget is the number of epoll_ctl(EPOLL_CTL_ADD) calls the run of p
// may make (stageconfig.Config.EpollBudget), or 0 for no count: its
// script's host uid is its own (a root caller's run id), the seccomp
// layer is disabled, or the kernel cannot let a counted call go on
// (seccomp.NotifyContinues, Linux 5.5), where the watches stay bounded as
// before (run.Result.SharedQuotas says how).
func (s *Request) epollBudget(p *backend.Spec) int {
	if identity.IsRunID(uint32(p.UID)) || stageconfig.Has(s.Disable, stageconfig.LayerSeccomp) || !seccomp.NotifyContinues() {
		return 0
	}
	if s.MaxEpollWatches > 0 {
		return s.MaxEpollWatches
	}
	return DefaultEpollWatches(MaxUserWatches())
}
