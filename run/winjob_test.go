package run

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
		applied []Layer
		refused []Layer
	}{
		{"default", backend.Spec{}, nil, []Layer{LayerJob}, []Layer{LayerAppContainer}},
		{"degraded", backend.Spec{Degraded: true}, nil, []Layer{LayerJob}, nil},
		{"no job", backend.Spec{}, errors.New("CreateJobObject: access denied"), nil, []Layer{LayerJob, LayerAppContainer}},
		{"job disabled", backend.Spec{Disabled: []Layer{LayerJob}}, nil, nil, nil},
		{"strict", backend.Spec{Strict: true}, nil, []Layer{LayerJob}, []Layer{LayerAppContainer}},
	} {
		applied, missing := windowsLayers(&tc.p, tc.jobErr)
		var refused []Layer
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
	if err := backend.IsolationError(missing); !errors.Is(err, ErrIsolation) || !strings.Contains(err.Error(), "appcontainer: not implemented") || !strings.Contains(err.Error(), "--allow-degraded") {
		t.Errorf("refusal reads %v", err)
	}
}

func TestWindowsEnv(t *testing.T) {
	base, err := buildEnv(map[string]string{"temp": `C:\evil`, "MY_TOKEN": "x", "systemroot": `D:\fake`}, `C:\w\run-1`, "req-1", sandboxPath)
	if err != nil {
		t.Fatal(err)
	}
	env := winproc.Env(base, `C:\Windows`, `C:\w\run-1`, `C:\Python312`)
	get := func(k string) []string {
		var vs []string
		for _, kv := range env {
			if name, v, _ := strings.Cut(kv, "="); strings.EqualFold(name, k) {
				vs = append(vs, v)
			}
		}
		return vs
	}
	for k, want := range map[string]string{
		"PATH":                     `C:\Python312;C:\Windows\System32;C:\Windows;C:\Windows\System32\Wbem;C:\Windows\System32\WindowsPowerShell\v1.0`,
		"SystemRoot":               `C:\Windows`,
		"TEMP":                     `C:\w\run-1`,
		"USERPROFILE":              `C:\w\run-1`,
		"ComSpec":                  `C:\Windows\System32\cmd.exe`,
		"HTTPS_PROXY":              "",
		"MY_TOKEN":                 "x",
		"SKILL_SANDBOX_REQUEST_ID": "req-1",
	} {
		if got := get(k); !slices.Equal(got, []string{want}) {
			t.Errorf("%s = %q, want exactly %q", k, got, want)
		}
	}
	if got := get("TMPDIR"); got != nil {
		t.Errorf("TMPDIR kept: %q", got)
	}
	if !slices.IsSortedFunc(env, func(a, b string) int { return strings.Compare(strings.ToUpper(a), strings.ToUpper(b)) }) {
		t.Error("environment not sorted")
	}
}
