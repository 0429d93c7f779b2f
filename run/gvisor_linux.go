package run

import (
	"context"
	"os"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/gvisor"
)

// layerGVisor is the layer of a run under gVisor: the script's system
// calls meet gVisor's kernel, not the host's.
const layerGVisor Layer = "gvisor"

// launchGVisor runs l's plan under gVisor's runsc (see
// run/internal/backend/gvisor) and fills res as launch does.
func launchGVisor(ctx context.Context, l *launchState, res *Result) error {
	p := l.plan
	res.Backend = BackendGVisor
	if err := gvisor.Check(p); err != nil {
		return err
	}
	rt, err := gvisor.Find()
	if err != nil {
		return err
	}
	res.BackendVersion = rt.Version
	applied, missing := gvisorLayers(os.Geteuid() == 0)
	if blocking := backend.Refusing(p, applied, missing); len(blocking) > 0 {
		return backend.IsolationError(blocking)
	}
	if ctx.Err() != nil {
		res.Canceled = true
		return nil
	}
	backend.WarnDegraded(p.Warnings, missing)
	res.Applied, res.Missing = applied, missing
	res.AddressSpaceMB = int(p.Config.Limits.AddressSpace >> 20)
	wd := newWatchdog(l)
	o, err := rt.Run(ctx, p, l.stdout, l.stderr, wd)
	if err != nil {
		res.Applied, res.Missing = nil, nil
		return err
	}
	res.Started = true
	res.ExitCode, res.Signal, res.Duration = o.ExitCode, o.Signal, o.Duration
	l.collectOutput(res)
	recordEnd(wd, res)
	return nil
}

// gvisorLayers are the layers of a gVisor run: gVisor's kernel, its
// namespaces and rlimits, and the cgroup when runsc runs as root
// (rootless runsc has none).
func gvisorLayers(root bool) ([]Layer, []Missing) {
	applied := []Layer{layerGVisor, LayerPIDNS, LayerMountNS, LayerIPCNS, LayerUTSNS, LayerNetNS, LayerRlimits, LayerCaps, LayerNoNewPrivs}
	if root {
		return append(applied, LayerCgroup), nil
	}
	return applied, []Missing{{Layer: LayerCgroup, Reason: "runsc runs rootless (the caller is not root), without a cgroup: memory, task and CPU limits of the sandbox as a whole are not kept"}}
}

// gvisorUnavailable reports whether err, from launchGVisor, says runsc is
// missing or could not start the sandbox here, which a fallback to the
// native backend may answer, rather than the gvisor backend refusing what
// the run asks (gvisor.Check: the network, a root caller's grants), which
// it may not.
func gvisorUnavailable(l *launchState, err error) bool {
	return errorsIsStart(err) && gvisor.Check(l.plan) == nil
}
