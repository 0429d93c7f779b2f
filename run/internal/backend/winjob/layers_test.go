package winjob

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"github.com/skill-sandbox/skill-sandbox/run/internal/winproc"
)

func TestJobLimitsOf(t *testing.T) {
	p := &backend.Spec{MemoryMB: 512, Config: stageconfig.Config{Limits: stageconfig.Limits{Procs: 128, CPUSeconds: 31}}}
	got := jobLimitsOf(p)
	want := winproc.Limits{JobMemoryBytes: 512 << 20, ActiveProcesses: 128, ProcessUserTime: 31 * 10_000_000}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := jobLimitsOf(&backend.Spec{Config: stageconfig.Config{Limits: stageconfig.Limits{Procs: 1 << 40, CPUSeconds: 1 << 40}}}); got.ActiveProcesses != 1<<31 || got.ProcessUserTime != (1<<32)*10_000_000 {
		t.Errorf("huge limits not clamped: %+v", got)
	}
	if time.Duration(want.ProcessUserTime)*100 != 31*time.Second {
		t.Error("100 ns units")
	}
}

// TestWindowsLayers: the AppContainer layer is always missing, so a
// Windows run is refused by default and goes ahead with AllowDegraded;
// a job that could not be made is missing with its cause.
func TestWindowsLayers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       backend.Spec
		jobErr  error
		applied []stageconfig.Layer
		refused []stageconfig.Layer
	}{
		{"default", backend.Spec{}, nil, []stageconfig.Layer{stageconfig.LayerJob}, []stageconfig.Layer{stageconfig.LayerAppContainer}},
		{"degraded", backend.Spec{Degraded: true}, nil, []stageconfig.Layer{stageconfig.LayerJob}, nil},
		{"no job", backend.Spec{}, errors.New("CreateJobObject: access denied"), nil, []stageconfig.Layer{stageconfig.LayerJob, stageconfig.LayerAppContainer}},
		{"job disabled", backend.Spec{Disabled: []stageconfig.Layer{stageconfig.LayerJob}}, nil, nil, nil},
		{"strict", backend.Spec{Strict: true}, nil, []stageconfig.Layer{stageconfig.LayerJob}, []stageconfig.Layer{stageconfig.LayerAppContainer}},
	} {
		applied, missing := windowsLayers(&tc.p, tc.jobErr)
		var refused []stageconfig.Layer
		for _, m := range backend.Refusing(&tc.p, applied, missing) {
			refused = append(refused, m.Layer)
		}
		if !slices.Equal(applied, tc.applied) || !slices.Equal(refused, tc.refused) {
			t.Errorf("%s: applied %v refused %v, want %v and %v", tc.name, applied, refused, tc.applied, tc.refused)
		}
		if tc.jobErr != nil && !strings.Contains(missing[0].Reason, "access denied") {
			t.Errorf("%s: reason %q", tc.name, missing[0].Reason)
		}
	}
	_, missing := windowsLayers(&backend.Spec{}, nil)
	if err := backend.IsolationError(missing); !errors.Is(err, backend.ErrIsolation) || !strings.Contains(err.Error(), "appcontainer: not implemented") || !strings.Contains(err.Error(), "--allow-degraded") {
		t.Errorf("refusal reads %v", err)
	}
}
