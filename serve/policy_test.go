package serve

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/serve/client"
)

// TestTenantPolicy: a tenant's runs get its policy file: a request may
// shorten its time limit, never lengthen it (400); a skill whose request
// file asks for a host the policy does not grant is refused (422), with a
// record; the other tenant, without that policy, is not limited by it.
func TestTenantPolicy(t *testing.T) {
	needSandbox(t)
	pol := filepath.Join(t.TempDir(), "team-a.toml")
	if err := os.WriteFile(pol, []byte("[resources]\ntimeout = \"3s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, func(c *Config) { c.Tokens[0].Policy = pol })
	req := map[string]any{"skill": "alpha", "script": "scripts/echo.sh", "timeout_seconds": 5,
		"files": []map[string]string{{"path": "input.txt", "content_base64": b64("a")}}}
	status, h, body := f.do(t, "POST", "/v1/executions?wait=true", tokenA, req)
	if status != http.StatusBadRequest || !strings.Contains(string(body), "exceeds the server's limit of 3") {
		t.Errorf("timeout over the policy's: %d %s", status, body)
	}
	checkProblem(t, h, body, http.StatusBadRequest, ProblemBadRequest)
	req["timeout_seconds"] = 2
	status, _, body = f.do(t, "POST", "/v1/executions?wait=true", tokenA, req)
	var e client.Execution
	if status != 200 || json.Unmarshal(body, &e) != nil || e.Status != StatusSuccess {
		t.Fatalf("shorter timeout: %d %s", status, body)
	}
	var rec struct {
		TimeoutMS float64 `json:"timeout_ms"`
	}
	if json.Unmarshal(e.Record, &rec) != nil || rec.TimeoutMS != 2000 {
		t.Errorf("record's timeout_ms %v", rec.TimeoutMS)
	}
	// Team b has no policy: 5 seconds is within the default 30.
	req = map[string]any{"skill": "beta", "script": "scripts/other.sh", "timeout_seconds": 5}
	if status, _, body := f.do(t, "POST", "/v1/executions?wait=true", tokenB, req); status != 200 {
		t.Errorf("team b: %d %s", status, body)
	}
	// A request file asking for a host the tenant's policy does not grant.
	skill := filepath.Join(f.srv.tenants["team-a"].skillDirs[0], "alpha")
	if err := os.WriteFile(filepath.Join(skill, "skill-sandbox.toml"), []byte("[network]\nallowed_domains = [\"api.example.com\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := len(f.records(t))
	status, h, body = f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "alpha", "script": "scripts/echo.sh"})
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "api.example.com") {
		t.Errorf("request for an ungranted host: %d %s", status, body)
	}
	checkProblem(t, h, body, http.StatusUnprocessableEntity, ProblemRefused)
	recs := f.records(t)
	if len(recs) != before+1 || recs[len(recs)-1].Outcome != "refused" {
		t.Errorf("records after the refusal: %d (was %d)", len(recs), before)
	}
}
