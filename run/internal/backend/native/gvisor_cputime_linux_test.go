package native

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// TestWarnCPUTime: a gvisor run whose CPU-time cap could end it before
// its timeout is told that gVisor does not keep that cap; the default
// cap (the timeout plus one second) and no cap say nothing.
func TestWarnCPUTime(t *testing.T) {
	for _, c := range []struct {
		cpu  uint64
		warn bool
	}{{2, true}, {30, true}, {31, false}, {0, false}} {
		var w bytes.Buffer
		p := &backend.Spec{Timeout: 30 * time.Second, Warnings: &w}
		p.Config.Limits.CPUSeconds = c.cpu
		warnCPUTime(p)
		if got := strings.Contains(w.String(), "does not keep the CPU-time cap"); got != c.warn {
			t.Errorf("CPU-time cap %d s with a 30 s timeout: warning %q, want one: %v", c.cpu, w.String(), c.warn)
		}
	}
	warnCPUTime(&backend.Spec{Timeout: time.Second}) // no Warnings writer: no panic
}
