package serve

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/serve/client"
)

// TestKeepMemory: a tenant's kept executions hold at most KeepMemory
// bytes of answers, whatever KeepRuns allows: past it the oldest are
// deleted. Without the bound, 1000 kept runs of 1 MiB of stdout, 1 MiB
// of stderr and 1 MiB of output.json each held about 5 GB (a real
// server grew by 217 MB in 40 such runs).
func TestKeepMemory(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, func(c *Config) { c.KeepMemory = 250 << 10 })
	writeSkill(t, f.srv.cfg.Tokens[0].Skills[0], "loud", map[string]string{
		"loud.sh": "#!/bin/sh\nhead -c 102400 /dev/zero | tr '\\0' x\n"})
	body := map[string]any{"skill": "loud", "script": "scripts/loud.sh"}
	var ids []string
	for range 4 {
		status, _, b := f.do(t, "POST", "/v1/executions?wait=true", tokenA, body)
		var e client.Execution
		if err := json.Unmarshal(b, &e); err != nil || status != http.StatusOK || e.Status != StatusSuccess {
			t.Fatalf("POST: %d %s %v", status, b, err)
		}
		ids = append(ids, e.ID)
	}
	if status, _, _ := f.do(t, "GET", "/v1/executions/"+ids[0], tokenA, nil); status != http.StatusNotFound {
		t.Errorf("the oldest execution, past KeepMemory: %d", status)
	}
	if status, _, _ := f.do(t, "GET", "/v1/executions/"+ids[3], tokenA, nil); status != http.StatusOK {
		t.Errorf("the newest execution: %d", status)
	}
	var held int64
	tn := f.srv.tenants["team-a"]
	tn.mu.Lock()
	for _, e := range tn.execs {
		held += e.memory()
	}
	tn.mu.Unlock()
	if held > 250<<10+110<<10 {
		t.Errorf("team-a's kept executions hold %d bytes", held)
	}
}
