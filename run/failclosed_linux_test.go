package run

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestRefusing checks which missing layers refuse a run.
func TestRefusing(t *testing.T) {
	all := append(backend.NamespaceLayers(false), backend.ProcessLayers(false)...)
	without := func(drop ...Layer) []Layer {
		var out []Layer
		for _, l := range all {
			if !stageconfig.Has(drop, l) {
				out = append(out, l)
			}
		}
		return out
	}
	miss := func(ls ...Layer) []Missing {
		var out []Missing
		for _, l := range ls {
			out = append(out, Missing{Layer: l, Reason: "gone"})
		}
		return out
	}
	cases := []struct {
		name    string
		p       backend.Spec
		applied []Layer
		missing []Missing
		want    []Layer
	}{
		{"complete", backend.Spec{}, all, nil, nil},
		{"no userns", backend.Spec{}, without(backend.NamespaceLayers(false)...), miss(backend.NamespaceLayers(false)...), backend.NamespaceLayers(false)},
		{"no userns, degraded", backend.Spec{Degraded: true}, without(backend.NamespaceLayers(false)...), miss(backend.NamespaceLayers(false)...), nil},
		{"no landlock", backend.Spec{}, without(LayerLandlockFS, LayerLandlockNet, LayerLandlockScope),
			miss(LayerLandlockFS, LayerLandlockNet, LayerLandlockScope), []Layer{LayerLandlockFS}},
		{"old landlock, namespaces cover", backend.Spec{}, without(LayerLandlockNet, LayerLandlockScope),
			miss(LayerLandlockNet, LayerLandlockScope), nil},
		{"old landlock, strict", backend.Spec{Strict: true}, without(LayerLandlockNet, LayerLandlockScope),
			miss(LayerLandlockNet, LayerLandlockScope), []Layer{LayerLandlockNet, LayerLandlockScope}},
		{"old landlock without netns", backend.Spec{}, without(LayerNetNS, LayerLandlockScope),
			miss(LayerNetNS, LayerLandlockScope), []Layer{LayerNetNS, LayerLandlockScope}},
		{"disabled by the caller", backend.Spec{Disabled: []Layer{LayerSeccomp}}, without(LayerSeccomp), miss(LayerSeccomp), nil},
		{"disabled, strict", backend.Spec{Strict: true, Disabled: []Layer{LayerSeccomp}}, without(LayerSeccomp), miss(LayerSeccomp), []Layer{LayerSeccomp}},
		{"userns disabled", backend.Spec{Disabled: []Layer{LayerUserNS}}, without(backend.NamespaceLayers(false)...), miss(backend.NamespaceLayers(false)...), nil},
		{"no_new_privs disabled: landlock and seccomp fail", backend.Spec{Disabled: []Layer{LayerNoNewPrivs}},
			without(LayerNoNewPrivs, LayerLandlockFS, LayerSeccomp), miss(LayerNoNewPrivs, LayerLandlockFS, LayerSeccomp), nil},
		{"no seccomp", backend.Spec{}, without(LayerSeccomp), miss(LayerSeccomp), []Layer{LayerSeccomp}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []Layer
			for _, m := range backend.Refusing(&c.p, c.applied, c.missing) {
				got = append(got, m.Layer)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("backend.Refusing = %v, want %v", got, c.want)
			}
		})
	}
}

// TestIsolationError checks the one message of a refusal: layers grouped
// by cause, and the way to opt in.
func TestIsolationError(t *testing.T) {
	err := backend.IsolationError([]Missing{
		{Layer: LayerUserNS, Reason: "cause A"}, {Layer: LayerPIDNS, Reason: "cause A"}, {Layer: LayerLandlockFS, Reason: "cause B"},
	})
	want := "isolation unavailable: refusing to run without userns, pidns: cause A; without landlock-fs: cause B. To run anyway"
	if !errors.Is(err, ErrIsolation) || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "--allow-degraded") {
		t.Errorf("got %q, want it to start %q and name --allow-degraded", err, want)
	}
}

// TestIncompleteError checks the message of a run refused for layers
// built part-way: each layer with its step, and why --allow-degraded does
// not apply.
func TestIncompleteError(t *testing.T) {
	err := backend.IncompleteError([]Missing{
		{Layer: LayerMountNS, Reason: "mask /home/u/.ssh: permission denied (EACCES)"},
		{Layer: LayerLandlockFS, Reason: "landlock rule for /usr: permission denied (EACCES)"},
		{Layer: LayerLandlockNet, Reason: "landlock rule for /usr: permission denied (EACCES)"},
	})
	want := "isolation unavailable: refusing to run: mountns set up part-way: mask /home/u/.ssh: permission denied (EACCES); " +
		"landlock-fs, landlock-net set up part-way: landlock rule for /usr: permission denied (EACCES). "
	if !errors.Is(err, ErrIsolation) || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "--allow-degraded") {
		t.Errorf("got %q, want it to start %q and name --allow-degraded", err, want)
	}
}
