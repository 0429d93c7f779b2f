package native

import (
	"context"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"net"
	"os"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/netproxy"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/gvisor"
	"github.com/skill-sandbox/skill-sandbox/run/internal/watch"
)

// LayerGVisor is the layer of a run under gVisor: the script's system
// calls meet gVisor's kernel, not the host's.
const LayerGVisor stageconfig.Layer = "gvisor"

// launchGVisor runs l's plan under gVisor's runsc (see
// run/internal/backend/gvisor) and fills out as launch does.
func launchGVisor(ctx context.Context, l *Launch, out *backend.Outcome) error {
	p := l.plan
	if err := gvisor.Check(p); err != nil {
		return err
	}
	rt, err := gvisor.Find()
	if err != nil {
		return err
	}
	out.BackendVersion = rt.Version
	applied, missing := gvisorLayers(os.Geteuid() == 0, p.Config.AllowNetwork)
	wp, applied, missing := planGVisorWatch(p, applied, missing)
	if blocking := backend.Refusing(p, applied, missing); len(blocking) > 0 {
		return backend.IsolationError(blocking)
	}
	if ctx.Err() != nil {
		out.Canceled = true
		return nil
	}
	backend.WarnDegraded(p.Warnings, missing)
	warnCPUTime(p)
	out.Applied, out.Missing = applied, missing
	if os.Geteuid() == 0 {
		// runsc's cgroup holds the sandbox's memory: RLIMIT_AS is relaxed
		// as the native backend's is with its cgroup (relaxAddressSpace).
		q := *p
		q.Config.Limits.AddressSpace = relaxedAddressSpace(p)
		p = &q
	}
	out.AddressSpaceMB = int(p.Config.Limits.AddressSpace >> 20)
	var serve gvisor.ServeFunc
	if p.Proxy != nil {
		defer l.proxy.stop(out)
		serve = func(ln net.Listener, local []net.Listener) error {
			srv, err := netproxy.New(*p.Proxy)
			if err != nil {
				ln.Close()
				return err
			}
			l.proxy.srv = srv
			go srv.Serve(ln)
			for i, port := range p.Config.LocalPorts {
				go srv.ServeLocal(local[i], port)
			}
			return nil
		}
	}
	wd := newWatchdog(l)
	var started func(int, string)
	if wp.Active() {
		// The watch ends the run past a cap, as natively; a pooled
		// sandbox calls it with its runsc's pid and its /tmp, which
		// holds the work folder, before the script is handed over.
		started = func(pid int, work string) {
			wp.Dir = work // the work folder's host folder (see planGVisorWatch)
			go watch.Run(wp, pid, false, wd.Done(), wd.Exceeded)
		}
	}
	o, pooled, err := runPooledGVisor(ctx, l, p, rt, wd, started, out)
	if !pooled {
		o, err = rt.Run(ctx, p, l.stdout, l.stderr, wd, serve, started)
	}
	if err != nil {
		out.Applied, out.Missing = nil, nil
		return err
	}
	out.Started = true
	out.ExitCode, out.Signal, out.Duration = o.ExitCode, o.Signal, o.Duration
	// The sandbox's as a whole, or 0 (unknown): see gvisor.Outcome.
	out.CPUTime, out.PeakMemoryKB = o.CPUTime, o.PeakMemoryKB
	l.collectOutput(out)
	backend.RecordEnd(wd, out)
	return nil
}

// gvisorLayers are the layers of a gVisor run: gVisor's kernel, its
// namespaces (the network one, gVisor's own stack, unless the run has
// the host's network) and rlimits, and the cgroup when runsc runs as
// root (rootless runsc has none).
func gvisorLayers(root, hostNetwork bool) ([]stageconfig.Layer, []stageconfig.Missing) {
	applied := []stageconfig.Layer{LayerGVisor, stageconfig.LayerPIDNS, stageconfig.LayerMountNS, stageconfig.LayerIPCNS, stageconfig.LayerUTSNS, stageconfig.LayerNetNS, stageconfig.LayerRlimits, stageconfig.LayerCaps, stageconfig.LayerNoNewPrivs}
	if hostNetwork {
		applied = slices.DeleteFunc(applied, func(l stageconfig.Layer) bool { return l == stageconfig.LayerNetNS })
	}
	if root {
		return append(applied, stageconfig.LayerCgroup), nil
	}
	return applied, []stageconfig.Missing{{Layer: stageconfig.LayerCgroup, Reason: "runsc runs rootless (the caller is not root), without a cgroup: memory, task and CPU limits of the sandbox as a whole are not kept"}}
}

// gvisorUnavailable reports whether err, from launchGVisor, says runsc is
// missing or could not start the sandbox here, which a fallback to the
// native backend may answer, rather than the gvisor backend refusing what
// the run asks (gvisor.Check: the network, a root caller's grants), which
// it may not.
func gvisorUnavailable(l *Launch, err error) bool {
	return errorsIsStart(err) && gvisor.Check(l.plan) == nil
}

// warnCPUTime says that a CPU-time cap that could end a script before
// its wall-clock limit is not kept: runsc 20221219 sets RLIMIT_CPU in
// gVisor's kernel, which never signals a script past it
// (docs/backends.md). The default cap, one second past the timeout,
// says nothing.
func warnCPUTime(p *backend.Spec) {
	limit := p.Config.Limits.CPUSeconds
	if p.Warnings == nil || limit == 0 || limit > uint64(p.Timeout.Seconds()) {
		return
	}
	fmt.Fprintf(p.Warnings, "skill-sandbox: warning: the gvisor backend does not keep the CPU-time cap of %d s (runsc ignores RLIMIT_CPU): only the timeout of %s stops the script\n", limit, p.Timeout)
}
