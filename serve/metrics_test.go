package serve

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// needTool returns the path of a tool the test needs, or skips the test
// without it (outside CI, which installs it: there a missing tool fails).
func needTool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed (CI installs the Debian package %s): %v", name, pkg, err)
		}
		t.Skipf("%s is not installed (Debian package %s): %v", name, pkg, err)
	}
	return p
}

// TestMetricsPromtool: /metrics passes Prometheus's own checker, after
// runs of two tenants, a refusal and a 401, and holds each family.
func TestMetricsPromtool(t *testing.T) {
	promtool := needTool(t, "promtool", "prometheus")
	needSandbox(t)
	f := newFixture(t, nil)
	runEcho(t, f)
	f.do(t, "POST", "/v1/executions?wait=true", tokenB, map[string]any{"skill": "beta", "script": "scripts/other.sh"})
	f.do(t, "POST", "/v1/executions", tokenB, map[string]any{"skill": "nope"})
	f.do(t, "GET", "/v1/skills", "bad-token", nil)
	status, h, body := f.do(t, "GET", "/metrics", "", nil)
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %d %s", status, h.Get("Content-Type"))
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\nmetrics:\n%s", err, out, body)
	}
	for _, want := range []string{
		`skill_sandbox_runs_total{tenant="team-a",outcome="exited"} 1`,
		`skill_sandbox_runs_total{tenant="team-b",outcome="exited"} 1`,
		`skill_sandbox_runs_total{tenant="team-b",outcome="refused"} 1`,
		`skill_sandbox_run_duration_seconds_count{tenant="team-a"} 1`,
		`skill_sandbox_queue_depth 0`, `skill_sandbox_runs_in_flight 0`,
		`skill_sandbox_auth_failures_total 1`, `skill_sandbox_audit_write_failures_total 0`,
		`skill_sandbox_pool_hits_total`, `skill_sandbox_layer_refusals_total`,
		`skill_sandbox_proxy_connections_total{verdict="denied"} 0`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
}

// TestLabelEscaping: label values are escaped as the format asks.
func TestLabelEscaping(t *testing.T) {
	if got := label("a\"b\\c\nd"); got != `"a\"b\\c\nd"` {
		t.Errorf("label = %s", got)
	}
}
