package run

import (
	"os"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// sharedQuotas names the per-user counters a started run shared with
// others: epoll watches, when the script ran as the caller (an
// unprivileged caller, or a run without a user namespace) or as nobody
// (a root caller's run that could not have an id of its own). A run id of
// its own starves only itself. The other per-user counters are bounded
// per run (the quotas and rlimits layers, seccomp), or charged to the
// run's own id.
func sharedQuotas(res *Result) []SharedQuota {
	if !res.Started {
		return nil
	}
	uid := res.SandboxUID
	switch {
	case uid == 0:
		uid = os.Geteuid()
	case uid != identity.Nobody:
		return nil
	}
	bound := BoundNone
	if stageconfig.Has(res.Applied, LayerCgroup) {
		bound = BoundMemoryCgroup
	}
	return []SharedQuota{{Counter: QuotaEpollWatches, UID: uid, Bound: bound}}
}
