package run

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/plan"
	"os"
	"slices"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestSharedQuotasNamed checks that a run whose host uid others share
// (the caller's for an unprivileged caller, nobody's for a root caller's
// run without an id of its own) names the epoll watches it could take
// from them in Result.SharedQuotas, with what bounds it, and that a root
// caller's run with an id of its own names none.
func TestSharedQuotasNamed(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"ok.py": "print('ok')\n"})
	want := func(res *Result, uid int) []SharedQuota {
		q := SharedQuota{Counter: QuotaEpollWatches, UID: uid, Bound: BoundNone}
		switch {
		case stageconfig.Has(res.Applied, LayerSeccomp) && seccomp.NotifyContinues():
			q.Bound, q.Budget = BoundRunBudget, DefaultEpollWatches(plan.MaxUserWatches())
		case stageconfig.Has(res.Applied, LayerCgroup):
			q.Bound = BoundMemoryCgroup
		}
		return []SharedQuota{q}
	}
	// shared is what a run of a caller of this uid shares: the caller's
	// uid when unprivileged, nobody's for a root caller without run ids.
	shared := func(res *Result) []SharedQuota {
		if os.Geteuid() != 0 {
			return want(res, os.Geteuid()) // the caller's own uid
		}
		if res.SandboxUID == nobodyUID {
			return want(res, nobodyUID) // no run ids here
		}
		return nil // a run id of its own
	}
	cases := []struct {
		name string
		sb   Sandbox
		want func(res *Result) []SharedQuota
	}{
		{"default", Sandbox{}, shared},
		{"without a cgroup", Sandbox{Disable: []Layer{LayerCgroup}}, shared},
		{"without seccomp", Sandbox{Disable: []Layer{LayerSeccomp}}, shared},
		{"without seccomp and a cgroup", Sandbox{Disable: []Layer{LayerSeccomp, LayerCgroup}}, shared},
		{"a budget of its own", Sandbox{MaxEpollWatches: 777}, func(res *Result) []SharedQuota {
			q := shared(res)
			if len(q) == 1 && q[0].Bound == BoundRunBudget {
				q[0].Budget = 777
			}
			return q
		}},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name string
			sb   Sandbox
			want func(res *Result) []SharedQuota
		}{"root caller, shared nobody", Sandbox{sharedNobody: true}, func(res *Result) []SharedQuota { return want(res, nobodyUID) }})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := runIn(t, tc.sb, dir, "ok.py")
			if o.err != nil || !o.res.Started {
				t.Fatalf("err %v started %v", o.err, o.res.Started)
			}
			if got, want := o.res.SharedQuotas, tc.want(o.res); !slices.Equal(got, want) {
				t.Errorf("SharedQuotas %+v, want %+v (sandbox uid %d, layers %v)", got, want, o.res.SandboxUID, o.res.Applied)
			}
		})
	}
	// A run refused before it started shared nothing.
	o := runIn(t, Sandbox{}, dir, "missing.py")
	if o.res.Started || o.res.SharedQuotas != nil {
		t.Errorf("refused run: started %v SharedQuotas %+v", o.res.Started, o.res.SharedQuotas)
	}
}
