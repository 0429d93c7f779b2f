package native

import (
	"math"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"github.com/skill-sandbox/skill-sandbox/run/internal/watch"
)

// planWatch decides what the watch (run/internal/watch) checks once the
// namespaces and the cgroup are known: the work folder when it is on the
// host disk (kept, or no mount namespace), the memory when there is no
// cgroup, the growth of the write grants. The watch is reported in
// st.supervised when it has anything to do, in st.missing when it cannot
// tell the run's processes.
func planWatch(p *backend.Spec, st *started, cg *cgroup.Cgroup) watch.Plan {
	var w watch.Plan
	if stageconfig.Has(p.Disabled, stageconfig.LayerWatch) {
		return w
	}
	if p.Config.WorkDirMB == 0 || !stageconfig.Has(st.namespaces, stageconfig.LayerMountNS) {
		w.Dir = p.Config.WorkDir
		w.MaxBytes = int64(p.WatchWorkDirMB) << 20
		w.MaxInodes = watch.InodeCap(p.WatchWorkDirMB)
	}
	if cg == nil {
		w.MaxMemory = int64(p.MemoryMB) << 20
	}
	if m, ok := planWriteGrants(p, &w); !ok {
		st.missing = append(st.missing, m)
	}
	if !w.Active() {
		return w
	}
	if st.pidns && st.pidNSLink == "" {
		// An init process of its own has not been sent its program yet
		// (see started.pidNSLink); a pooled one was read when it started.
		st.pidNSLink = watch.PIDNSLink(st.proc.Pid())
	}
	if st.pidns && st.pidNSLink == "" {
		// Without it the watch would count none of the run's
		// processes: the layer is missing, not silently idle.
		st.missing = append(st.missing, stageconfig.Missing{Layer: stageconfig.LayerWatch, Reason: "the init process's PID namespace could not be read"})
		return watch.Plan{}
	}
	w.PIDNSLink = st.pidNSLink
	st.supervised = append(st.supervised, stageconfig.LayerWatch)
	return w
}

// planWriteGrants sets in w the write grants of p, their size now and
// their cap (--write-size). ok is false, with the watch layer missing,
// when a grant cannot be walked; w then caps none.
func planWriteGrants(p *backend.Spec, w *watch.Plan) (m stageconfig.Missing, ok bool) {
	for _, g := range p.Config.Grants {
		if g.Write {
			w.Grants = append(w.Grants, g.Path)
		}
	}
	if len(w.Grants) == 0 {
		return stageconfig.Missing{}, true
	}
	// Taken before the script has its program: what the grants held
	// before the run is not the run's to answer for.
	base, ok := watch.GrantsUsage(w.Grants, math.MaxInt64)
	if !ok {
		w.Grants = nil
		return stageconfig.Missing{Layer: stageconfig.LayerWatch, Reason: "a write grant could not be walked to cap its growth"}, false
	}
	w.GrantBase, w.MaxGrowth = base, int64(p.WatchWriteMB)<<20
	return stageconfig.Missing{}, true
}
