//go:build linux || darwin

package native

import (
	"bufio"
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// handshake fails the start when sending the init process its program
// or making its cgroup failed (startErr), else checks the layer report
// (see checkReport) and lets the init process execve the script, with a
// go-ahead when it waits for one. It records the layers and whether the
// script started in out. A refused run's init process is killed.
func handshake(l *Launch, startErr error, out *backend.Outcome) error {
	if startErr != nil {
		l.kill()
		return fmt.Errorf("%w: %v", backend.ErrStart, startErr)
	}
	rd := bufio.NewReader(l.init.repR)
	waiting, err := l.checkReport(rd, out)
	if err != nil {
		l.kill()
		return err
	}
	if waiting {
		if _, err := l.init.cfgW.Write([]byte{stageconfig.GoByte}); err != nil {
			l.kill()
			return fmt.Errorf("%w: starting script: %v", backend.ErrStart, err)
		}
	}
	// The report pipe is close-on-exec: its end without another message
	// means execve succeeded.
	ok, execErr, err := readStageAfter(rd, l)
	switch {
	case err != nil:
		return fmt.Errorf("%w: init process: %w", backend.ErrStart, err)
	case execErr != "":
		return fmt.Errorf("%w: exec %s: %s", backend.ErrStart, l.plan.Config.Argv[0], execErr)
	}
	out.Started = ok
	return nil
}

// checkReport reads the init process's layer report into out and
// refuses a run with missing layers (see backend.Refusing) or with layers built
// part-way (which the init process has refused already, see
// backend.IncompleteError); with a host allowlist it starts the proxy. waiting
// says the init process waits for the go-ahead.
func (l *Launch) checkReport(rd *bufio.Reader, out *backend.Outcome) (waiting bool, err error) {
	p := l.plan
	rep, waiting, err := readStageReport(rd, l)
	if err != nil {
		return false, fmt.Errorf("%w: init process: %w", backend.ErrStart, err)
	}
	if rep.Fatal != "" {
		return false, fmt.Errorf("%w: init process: %s", backend.ErrStart, rep.Fatal)
	}
	if rep.Prebuilt {
		l.pool.countPrebuilt()
	}
	out.Applied, out.Missing = mergeLayers(p, l.init.st, rep)
	out.Missing = posix.ExplainMissing(out.Missing)
	if rep.Changed != "" {
		// A grant or mask swapped since the checks: refused like any
		// other isolation failure, AllowDegraded or not.
		return false, fmt.Errorf("%w: init process: %s", backend.ErrIsolation, rep.Changed)
	}
	if len(rep.Incomplete) > 0 {
		return false, backend.IncompleteError(posix.ExplainIncomplete(rep.Incomplete))
	}
	if blocking := backend.Refusing(p, out.Applied, out.Missing); len(blocking) > 0 {
		// The init process waits for the go-ahead whenever a layer is
		// missing and the config may refuse the run (stageconfig's
		// WaitForGo), so the script has not started.
		return false, backend.IsolationError(blocking)
	}
	if p.Proxy != nil {
		if err := startAllowlist(l, l.init.proxySup, out); err != nil {
			return false, err
		}
	}
	if b := l.cfg.EpollBudget; b > 0 && stageconfig.Has(rep.Applied, stageconfig.LayerSeccomp) {
		// The script may already wait on its first watch.
		if err := l.epoll.start(l.init.notifySup, b); err != nil {
			return false, err
		}
		out.EpollBudget = b
	}
	backend.WarnDegraded(p.Warnings, out.Missing)
	return waiting, nil
}

// mergeLayers orders the init process's report, the layers the supervisor
// applied or could not have and the disabled layers into Applied and
// Missing.
func mergeLayers(p *backend.Spec, st *started, rep stageconfig.Report) ([]stageconfig.Layer, []stageconfig.Missing) {
	var applied []stageconfig.Layer
	var missing []stageconfig.Missing
	kept := rootKept(p.UID)
	for _, l := range backend.AllLayers(p.Config.AllowNetwork) {
		switch {
		case l == stageconfig.LayerUserNS && kept != "" && !stageconfig.Has(p.Disabled, l):
			missing = append(missing, stageconfig.Missing{Layer: l, Reason: kept})
		case stageconfig.Has(rep.Applied, l), stageconfig.Has(st.supervised, l):
			applied = append(applied, l)
		case stageconfig.Has(p.Disabled, l):
			missing = append(missing, stageconfig.Missing{Layer: l, Reason: "disabled"})
		case l == stageconfig.LayerLandlockNet && stageconfig.Has(rep.Applied, stageconfig.LayerNetNS):
			// Not needed: TCP cannot leave the private network
			// namespace (see applyLandlock).
		case l == stageconfig.LayerWatch && !hasMissing(st.missing, l):
			// Not needed: the work folder is a capped tmpfs and the
			// cgroup caps the memory (see planWatch).
		default:
			reason := ""
			for _, m := range append(st.missing, rep.Missing...) {
				if m.Layer == l {
					reason = m.Reason
					break
				}
			}
			if reason == "" {
				reason = "not reported by the init process"
			}
			missing = append(missing, stageconfig.Missing{Layer: l, Reason: reason})
		}
	}
	return applied, missing
}

// hasMissing reports whether ms holds layer l.
func hasMissing(ms []stageconfig.Missing, l stageconfig.Layer) bool {
	for _, m := range ms {
		if m.Layer == l {
			return true
		}
	}
	return false
}
