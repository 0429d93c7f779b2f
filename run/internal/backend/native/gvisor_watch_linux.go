package native

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/gvisor"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"github.com/skill-sandbox/skill-sandbox/run/internal/watch"
)

// planGVisorWatch decides what the watch (run/internal/watch) checks
// for a gVisor run, as planWatch does for a native one: the growth of
// the write grants, which runsc binds from the host, and the work
// folder, a host folder too (as a kept one natively). /tmp is a sized
// tmpfs (gVisor's kernel keeps that cap), and the memory is held by the
// gvisor backend's own memory watch (it reads gVisor's figures). The processes it reads are runsc's and their
// descendants (Plan.Tree): the Sentry and the gofer hold the run's files
// on the host, the script's own processes live inside gVisor's kernel.
// applied and missing are the run's layers, extended.
func planGVisorWatch(p *backend.Spec, applied []stageconfig.Layer, missing []stageconfig.Missing) (watch.Plan, []stageconfig.Layer, []stageconfig.Missing) {
	w := watch.Plan{Tree: true, HeldRoot: gvisor.HostRootInSandbox}
	if stageconfig.Has(p.Disabled, stageconfig.LayerWatch) {
		return watch.Plan{}, applied, missing
	}
	// The work folder is a host folder (see gvisor's mounts), kept or
	// not: the watch holds it to its size and entries. Its path, in
	// runsc's bundle unless kept, is set once runsc runs; a pre-started
	// sandbox's is its /tmp, which holds the work folder (see
	// gvisor.Prestarted.Run), held to the same caps.
	w.Dir = p.Config.WorkDir
	w.MaxBytes = int64(p.WatchWorkDirMB) << 20
	w.MaxInodes = watch.InodeCap(p.WatchWorkDirMB)
	// Before runsc starts, as natively before the script has its program.
	if m, ok := planWriteGrants(p, &w); !ok {
		missing = append(missing, m)
	}
	if !w.Active() {
		return watch.Plan{}, applied, missing
	}
	return w, append(applied, stageconfig.LayerWatch), missing
}
