package backend

import (
	"fmt"
	"io"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// Fail closed: a run whose isolation is weaker than the design is refused
// unless the caller opted into a degraded run (Sandbox.AllowDegraded). The
// functions here decide which missing layers refuse a run, and word the one
// error and the warnings.

// coverOf returns, for a layer whose job other layers also do, those
// layers. Such a layer missing does not refuse a run when all of its cover
// is in force:
//   - landlock-net (TCP bind and connect) is redundant in a network
//     namespace without interfaces;
//   - landlock-scope keeps signals and abstract unix sockets inside the
//     sandbox, which the PID namespace (no host process is visible) and
//     the network namespace (abstract sockets belong to it) also do.
func coverOf(l stageconfig.Layer) []stageconfig.Layer {
	switch l {
	case stageconfig.LayerLandlockNet:
		return []stageconfig.Layer{stageconfig.LayerNetNS}
	case stageconfig.LayerLandlockScope:
		return []stageconfig.Layer{stageconfig.LayerPIDNS, stageconfig.LayerNetNS}
	}
	return nil
}

// DegradedByChoice says whether any missing layer lets the run go on
// (see Refusing).
func DegradedByChoice(p *Spec) bool {
	return !p.Strict && (p.Degraded || len(p.Disabled) > 0)
}

// Refusing returns the missing layers that refuse the run under the
// caller's choice: every one with RequireIsolation; none with
// AllowDegraded or when the caller disabled layers (a degraded run by
// choice, whose consequences, such as Landlock failing without
// no_new_privs, are the point of the experiment); otherwise those that
// guard the host (GuardsHost) and are not covered by applied layers.
func Refusing(p *Spec, applied []stageconfig.Layer, missing []stageconfig.Missing) []stageconfig.Missing {
	if DegradedByChoice(p) {
		return nil
	}
	var out []stageconfig.Missing
	for _, m := range missing {
		if !p.Strict && (covered(m.Layer, applied) || !GuardsHost(m.Layer)) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// covered reports whether every layer covering l is applied.
func covered(l stageconfig.Layer, applied []stageconfig.Layer) bool {
	cover := coverOf(l)
	if len(cover) == 0 {
		return false
	}
	for _, c := range cover {
		if !stageconfig.Has(applied, c) {
			return false
		}
	}
	return true
}

// byReason groups missing layers that share a reason (a missing user
// namespace takes all six namespaces with it), keeping first-seen order.
func byReason(missing []stageconfig.Missing) (reasons []string, layers map[string][]string) {
	layers = map[string][]string{}
	for _, m := range missing {
		if _, seen := layers[m.Reason]; !seen {
			reasons = append(reasons, m.Reason)
		}
		layers[m.Reason] = append(layers[m.Reason], string(m.Layer))
	}
	return reasons, layers
}

// writeByReason writes, for each reason of missing (byReason), format
// filled with the layers it took and the reason, separated by sep.
func writeByReason(b *strings.Builder, missing []stageconfig.Missing, sep, format string) {
	reasons, layers := byReason(missing)
	for i, r := range reasons {
		if i > 0 {
			b.WriteString(sep)
		}
		fmt.Fprintf(b, format, strings.Join(layers[r], ", "), r)
	}
}

// IsolationError is the one message of a refused run: which layers are
// missing, why, how to fix it, and how to opt in.
func IsolationError(blocking []stageconfig.Missing) error {
	var b strings.Builder
	b.WriteString("refusing to run without ")
	writeByReason(&b, blocking, "; without ", "%s: %s")
	b.WriteString(". To run anyway with the layers that exist, pass --allow-degraded (Sandbox.AllowDegraded); docs/security.md lists what a degraded run lets through")
	return fmt.Errorf("%w: %s", ErrIsolation, b.String())
}

// IncompleteError is the message of a run the init process refused because
// layers the kernel offers failed part-way through their construction
// (stageconfig.Report.Incomplete): a grant not bound, a mask not mounted,
// a read-only lock or pivot_root refused, a Landlock rule not added. It is
// ErrIsolation, and AllowDegraded does not skip it: that opt-in accepts a
// layer the host does not offer, never one whose masks or grants silently
// did not apply.
func IncompleteError(incomplete []stageconfig.Missing) error {
	var b strings.Builder
	b.WriteString("refusing to run: ")
	writeByReason(&b, incomplete, "; ", "%s set up part-way: %s")
	b.WriteString(". The kernel offers these layers but building them failed, so --allow-degraded (Sandbox.AllowDegraded) does not apply; docs/security.md, \"Fail closed\", says what it may skip")
	return fmt.Errorf("%w: %s", ErrIsolation, b.String())
}

// WarnDegraded writes one warning line per cause of the layers a run goes
// ahead without.
func WarnDegraded(w io.Writer, missing []stageconfig.Missing) {
	if w == nil {
		return
	}
	reasons, layers := byReason(missing)
	for _, r := range reasons {
		fmt.Fprintf(w, "skill-sandbox: warning: running without %s: %s\n", strings.Join(layers[r], ", "), r)
	}
}

// GuardsHost reports whether l keeps the script away from the host's data
// and processes: by default a run is refused when such a layer is missing
// (see Refusing). The cgroup is not one: it bounds the machine's memory,
// process and CPU use, which RLIMIT_AS and RLIMIT_NPROC also bound per
// process, and many machines (an ordinary user without a delegated cgroup
// v2 subtree) cannot have it, so by default its absence is reported, not
// refused; RequireIsolation refuses it too. The watch is not one either:
// it bounds disk and memory use, and is missing only when disabled.
func GuardsHost(l stageconfig.Layer) bool {
	return l != stageconfig.LayerCgroup && l != stageconfig.LayerWatch
}
