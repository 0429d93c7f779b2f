package run

import (
	"context"
	"errors"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/native"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRunsc writes a runsc into a new folder put alone on PATH: it
// answers --version and fails every start with an error in its log, as
// runsc does on a host where it cannot start a sandbox.
func fakeRunsc(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
for a; do
	case "$prev" in --log) log="$a" ;; esac
	prev="$a"
	case "$a" in --version) echo "runsc version fake"; exit 0 ;; esac
done
case " $* " in *" run "*) echo '{"level":"error","msg":"cannot create sandbox: fake refusal"}' >"$log"; exit 1 ;; esac
exit 0
`
	if err := os.WriteFile(filepath.Join(dir, "runsc"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Setenv("PATH", dir)
}

// TestGVisorFallback checks that a gvisor run falls back to the native
// backend only when allowed and only when gVisor is not available here
// (no runsc; runsc cannot start), saying why; and that what the gvisor
// backend refuses for the run's own asking (a local service) is refused
// whether or not a fallback is allowed.
func TestGVisorFallback(t *testing.T) {
	for _, tc := range []struct {
		name      string
		path      func(t *testing.T)
		fallback  bool
		local     bool
		wantRan   bool
		wantCause string // in the error, or in BackendFallback when it ran
	}{
		{"no runsc, refused", func(t *testing.T) { t.Setenv("PATH", t.TempDir()) }, false, false, false, "apt-get install runsc"},
		{"no runsc, fallback", func(t *testing.T) { t.Setenv("PATH", t.TempDir()) }, true, false, true, "not on PATH"},
		{"runsc cannot start, refused", fakeRunsc, false, false, false, "fake refusal"},
		{"runsc cannot start, fallback", fakeRunsc, true, false, true, "fake refusal"},
		{"local service, fallback not taken", fakeRunsc, true, true, false, "gVisor backend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			skill := gvisorSkill(t, "echo RAN\n")
			tc.path(t)
			sb := &Sandbox{SkillDir: skill, Backend: BackendGVisor, BackendFallback: tc.fallback}
			if tc.local {
				sb.AllowUnix = []string{"/run/postgresql/.s.PGSQL.5432"}
			}
			res, err := sb.Run(context.Background(), "scripts/k.sh", nil)
			if !tc.wantRan {
				if err == nil || res.Started || !strings.Contains(err.Error(), tc.wantCause) || res.BackendFallback != "" {
					t.Fatalf("started %v, fallback %q, err %v; want refused with %q", res.Started, res.BackendFallback, err, tc.wantCause)
				}
				if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrStart) {
					t.Fatalf("err %v: want ErrUnsupported or ErrStart", err)
				}
				return
			}
			if err != nil {
				if errors.Is(err, ErrIsolation) {
					t.Skipf("the native backend cannot run here: %v", err)
				}
				t.Fatal(err)
			}
			if got := string(res.Stdout.Captured); got != "RAN\n" || res.Backend != BackendNative || res.BackendVersion != "" {
				t.Fatalf("stdout %q, backend %q %q; want RAN from the native backend", got, res.Backend, res.BackendVersion)
			}
			if !strings.HasPrefix(res.BackendFallback, "gvisor: ") || !strings.Contains(res.BackendFallback, tc.wantCause) {
				t.Fatalf("BackendFallback %q: want gVisor's error with %q", res.BackendFallback, tc.wantCause)
			}
			if len(res.Applied) == 0 || res.Applied[0] == native.LayerGVisor {
				t.Fatalf("applied %v: want the native layers", res.Applied)
			}
		})
	}
}
