package native

import (
	"os"
	"os/exec"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestWatchNeedsPIDNamespace checks that a watch which cannot tell the
// run's processes, because the init process's PID namespace could not be
// read (it is read before the init process runs its program, which makes it not
// dumpable), is a missing layer rather than a watch that counts nothing.
func TestWatchNeedsPIDNamespace(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		pid    int
		active bool
	}{
		{"readable", os.Getpid(), true},
		{"unreadable (no such process)", gone.Process.Pid, false},
	} {
		p := &backend.Spec{MemoryMB: 64}
		p.Config.WorkDirMB = 16
		st := &started{proc: posix.NewProcess(c.pid), pidns: true, namespaces: []stageconfig.Layer{stageconfig.LayerMountNS, stageconfig.LayerPIDNS}}
		w := planWatch(p, st, nil)
		if w.Active() != c.active || stageconfig.Has(st.supervised, stageconfig.LayerWatch) != c.active || hasMissing(st.missing, stageconfig.LayerWatch) == c.active {
			t.Errorf("%s: active %v, supervised %v, missing %v; want the watch active: %v", c.name, w.Active(), st.supervised, st.missing, c.active)
		}
		if c.active && w.PIDNSLink == "" {
			t.Errorf("%s: no PID namespace link in the plan", c.name)
		}
	}
}
