package run

import (
	"strings"
	"testing"
	"time"
)

// TestGVisorPoolUnwatchedTmp: a gvisor run with the supervisor's watch
// disabled keeps its /tmp to the work folder's size, as unpooled (a
// tmpfs of that size: ENOSPC), so it is never pooled: a pre-started
// sandbox's /tmp is a host folder only the watch caps, and a script
// there filled the host's disk past --workdir-size.
func TestGVisorPoolUnwatchedTmp(t *testing.T) {
	needRunsc(t)
	skill := gvisorSkill(t, `dd if=/dev/zero of=/tmp/big bs=1M count=64 2>/dev/null
echo "size $(wc -c < /tmp/big)"
`)
	pl, err := NewPool(1, time.Hour, Sandbox{Backend: BackendGVisor})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	sb := Sandbox{Backend: BackendGVisor, WorkDirMB: 16, MaxFileMB: 512, Pool: pl, Timeout: time.Minute, Disable: []Layer{LayerWatch}}
	check := func(name string) {
		t.Helper()
		o := runIn(t, sb, skill, "scripts/k.sh")
		if o.err != nil || !strings.HasPrefix(o.stdout, "size ") || strings.TrimSpace(o.stdout) == "size 67108864" {
			t.Errorf("%s run: /tmp held more than --workdir-size 16: stdout %q, stderr %q, err %v", name, o.stdout, o.stderr, o.err)
		}
	}
	// Three runs: the first one's shape is not always the next ones'.
	for range 3 {
		check("teaching")
	}
	// A pool that learnt the shape starts a sandbox within seconds (tens
	// under load): with the watch off, it must never.
	for deadline := time.Now().Add(30 * time.Second); pl.GVisorStats().Started == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	check("third")
	if st := pl.GVisorStats(); st.Started != 0 || st.Taken != 0 {
		t.Errorf("runs without the watch were pooled: %+v", st)
	}
}
