package grants

import (
	"errors"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestPlanBelow: each grant counts every mount below it (Held: what its
// recursive bind would carry), and records the others for the innermost
// grant holding them; a mount granted on its own is bound as a grant, and
// one at the grant's own path is the grant's.
func TestPlanBelow(t *testing.T) {
	a := DenyAliases{mounts: []mountEntry{
		{id: 1, point: "/"},
		{id: 2, point: "/g"},        // the grant's own mount
		{id: 3, point: "/g/n"},      // a grant of its own
		{id: 4, point: "/g/n/deep"}, // below the nested grant: its own
		{id: 5, point: "/other"},
	}}
	mounts := []stageconfig.GrantMount{{Path: "/g"}, {Path: "/g/n"}, {Path: "/g/n/deep"}}
	if err := a.PlanBelow(mounts); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{2, 1, 0} {
		if g := mounts[i]; g.Held != want || len(g.Below) != 0 {
			t.Errorf("%s: Held %d Below %v, want Held %d and nothing to re-create (each mount is a grant)", g.Path, g.Held, g.Below, want)
		}
	}

	// A mount below a grant that its path does not reach any more.
	a.mounts = append(a.mounts, mountEntry{id: 6, point: "/g/n/gone-since-planning-0c1f"})
	err := a.PlanBelow(mounts)
	if !errors.Is(err, stageconfig.ErrBadConfig) || !strings.Contains(err.Error(), "/g/n/gone-since-planning-0c1f below /g/n") {
		t.Errorf("PlanBelow with a mount gone: %v, want it refused for the innermost grant, /g/n", err)
	}
}
