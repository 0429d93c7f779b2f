package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/serve/client"
)

// TestAuthRequired: every API route answers 401 without a token and with
// a wrong one, as a problem details object, before anything else.
func TestAuthRequired(t *testing.T) {
	f := newFixture(t, nil)
	routes := []struct{ method, path string }{
		{"GET", "/v1/skills"}, {"GET", "/v1/skills/alpha"}, {"POST", "/v1/executions"},
		{"GET", "/v1/executions/0123"}, {"GET", "/v1/executions/0123/artifacts/out/report.txt"}, {"GET", "/v1/nothing"},
	}
	for _, rt := range routes {
		for _, tok := range []string{"", "wrong-token", tokenA + "x"} {
			status, h, body := f.do(t, rt.method, rt.path, tok, nil)
			if status != http.StatusUnauthorized {
				t.Errorf("%s %s with token %q: status %d, want 401", rt.method, rt.path, tok, status)
			}
			checkProblem(t, h, body, http.StatusUnauthorized, ProblemUnauthorized)
			if h.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s: no WWW-Authenticate", rt.method, rt.path)
			}
		}
	}
	for _, p := range []string{"/healthz", "/metrics", "/v1/openapi.json"} {
		if status, _, _ := f.do(t, "GET", p, "", nil); status != http.StatusOK {
			t.Errorf("GET %s without a token: %d, want 200", p, status)
		}
	}
}

// checkProblem checks an RFC 9457 problem details answer.
func checkProblem(t testing.TB, h http.Header, body []byte, status int, kind string) {
	t.Helper()
	if ct := h.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type %q, want application/problem+json", ct)
	}
	var p problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("problem %s: %v", body, err)
	}
	if p.Status != status || p.Type != ProblemTypeBase+kind || p.Title == "" {
		t.Errorf("problem %s: want status %d type %s", body, status, kind)
	}
}

// TestSkillsPerTenant: each tenant lists and reads its own skills only;
// another tenant's skill is 404, exactly like one that does not exist.
func TestSkillsPerTenant(t *testing.T) {
	f := newFixture(t, nil)
	for _, c := range []struct {
		tok, own, other string
		scripts         int
	}{{tokenA, "alpha", "beta", 1}, {tokenB, "beta", "alpha", 2}} {
		status, _, body := f.do(t, "GET", "/v1/skills", c.tok, nil)
		var list skillList
		if err := json.Unmarshal(body, &list); err != nil || status != 200 {
			t.Fatalf("GET /v1/skills: %d %s", status, body)
		}
		if len(list.Skills) != 1 || list.Skills[0].Name != c.own || len(list.Skills[0].Scripts) != c.scripts ||
			len(list.Skills[0].Digest) != 64 || list.Skills[0].Description == "" {
			t.Errorf("GET /v1/skills as owner of %s: %s", c.own, body)
		}
		status, _, body = f.do(t, "GET", "/v1/skills/"+c.own, c.tok, nil)
		if status != 200 || !strings.Contains(string(body), `"scripts/echo.sh"`) {
			t.Errorf("GET /v1/skills/%s: %d %s", c.own, status, body)
		}
		status, h, body := f.do(t, "GET", "/v1/skills/"+c.other, c.tok, nil)
		if status != 404 {
			t.Errorf("GET /v1/skills/%s of another tenant: %d, want 404", c.other, status)
		}
		checkProblem(t, h, body, 404, ProblemNotFound)
		_, _, missing := f.do(t, "GET", "/v1/skills/no-such-skill", c.tok, nil)
		if strings.ReplaceAll(string(body), c.other, "") != strings.ReplaceAll(string(missing), "no-such-skill", "") {
			t.Errorf("another tenant's skill answers otherwise than a missing one:\n%s\n%s", body, missing)
		}
	}
}

// TestExecutionRoundTrip runs a skill with JSON input and an input file,
// synchronously, and checks the answer, the artifact download and the
// record; then the other tenant cannot see any of it.
func TestExecutionRoundTrip(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, nil)
	req := map[string]any{"skill": "alpha", "script": "scripts/echo.sh", "args": []string{"hello"},
		"input": map[string]any{"n": 1}, "files": []map[string]string{{"path": "input.txt", "content_base64": b64("one two three")}}}
	status, h, body := f.do(t, "POST", "/v1/executions?wait=true", tokenA, req)
	if status != http.StatusOK {
		t.Fatalf("POST ?wait=true: %d %s", status, body)
	}
	var v client.Execution
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	if v.Status != StatusSuccess || v.Record == nil || v.ExitCode != 0 || v.Stdout.Text != "done hello\n" {
		t.Fatalf("execution: %s", body)
	}
	if h.Get("Location") != "/v1/executions/"+v.ID {
		t.Errorf("Location %q", h.Get("Location"))
	}
	if string(v.Output) != `{"stdin":{"n":1},"words":3}` {
		t.Errorf("output %s", v.Output)
	}
	var report *client.Artifact
	for i, a := range v.Artifacts {
		if a.Path == "out/report.txt" {
			report = &v.Artifacts[i]
		}
	}
	if report == nil || report.Size != int64(len("report hello\n")) || len(report.SHA256) != 64 || report.URL == "" {
		t.Fatalf("artifacts %+v", v.Artifacts)
	}
	status, _, data := f.do(t, "GET", report.URL, tokenA, nil)
	if status != 200 || string(data) != "report hello\n" {
		t.Errorf("GET %s: %d %q", report.URL, status, data)
	}
	status, _, got := f.do(t, "GET", "/v1/executions/"+v.ID, tokenA, nil)
	if status != 200 || !strings.Contains(string(got), `"status":"success"`) {
		t.Errorf("GET execution: %d %s", status, got)
	}
	// Team b sees none of it.
	for _, p := range []string{"/v1/executions/" + v.ID, report.URL} {
		status, h, body := f.do(t, "GET", p, tokenB, nil)
		if status != 404 {
			t.Errorf("GET %s as team-b: %d, want 404", p, status)
		}
		checkProblem(t, h, body, 404, ProblemNotFound)
	}
	recs := f.records(t)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	if r.Serve == nil || r.Serve.Tenant != "team-a" || r.Serve.TokenID != "a-1" || r.Serve.ExecutionID != v.ID || r.RequestID != v.ID {
		t.Errorf("record's serve %+v, request id %s", r.Serve, r.RequestID)
	}
	if r.Outcome != audit.OutcomeExited {
		t.Errorf("record outcome %s", r.Outcome)
	}
	if raw, _ := json.Marshal(r); strings.Contains(string(raw), tokenA) {
		t.Error("the record holds the token")
	}
	if strings.Contains(f.logs.String(), tokenA) {
		t.Error("the log holds the token")
	}
}

// TestExecutionPolled: without wait the answer is 202 and the execution
// is polled until it ends; another tenant cannot run a tenant's skill.
func TestExecutionPolled(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, nil)
	status, h, body := f.do(t, "POST", "/v1/executions", tokenB, map[string]any{"skill": "beta", "script": "scripts/other.sh"})
	if status != http.StatusAccepted {
		t.Fatalf("POST: %d %s", status, body)
	}
	v := waitExecution(t, f, h.Get("Location"), tokenB)
	if v.Status != StatusSuccess || v.Stdout.Text != "other\n" || string(v.Output) != "null" {
		t.Errorf("execution %+v", v)
	}
	status, h, body = f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "beta", "script": "scripts/other.sh"})
	if status != 404 {
		t.Errorf("team-a running team-b's skill: %d %s", status, body)
	}
	checkProblem(t, h, body, 404, ProblemNotFound)
}

// waitExecution polls an execution until it is finished.
func waitExecution(t testing.TB, f *fixture, loc, tok string) client.Execution {
	t.Helper()
	for {
		status, _, body := f.do(t, "GET", loc, tok, nil)
		if status != 200 {
			t.Fatalf("GET %s: %d %s", loc, status, body)
		}
		var v client.Execution
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		if v.Record != nil {
			return v
		}
		<-timeAfter(20)
	}
}

// TestDrainingRefuses: once draining, a new execution is refused with 503
// and Retry-After, and writes one record (outcome refused, error_kind
// draining) that the schema takes.
func TestDrainingRefuses(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.Close()
	status, h, body := f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "alpha", "script": "scripts/echo.sh"})
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Fatalf("POST while draining: %d %s", status, body)
	}
	checkProblem(t, h, body, http.StatusServiceUnavailable, ProblemDraining)
	recs := f.records(t)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	if r.Outcome != audit.OutcomeRefused || r.ErrorKind != audit.KindDraining || r.Serve == nil ||
		r.Serve.Tenant != "team-a" || r.Serve.TokenID != "a-1" || r.RequestID == "" || r.Serve.ExecutionID != r.RequestID {
		t.Errorf("record: outcome %s, kind %s, request %s, serve %+v", r.Outcome, r.ErrorKind, r.RequestID, r.Serve)
	}
	checkRecords(t, f)
}

// TestRefusalFlood: a flood of requests refused for the server's state
// writes at most 16 records a second, and the records account for every
// refused request (the sum of 1 + serve.suppressed).
func TestRefusalFlood(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.Close()
	const n = 200
	start := time.Now()
	for range n {
		if status, _, body := f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "alpha", "script": "scripts/echo.sh"}); status != http.StatusServiceUnavailable {
			t.Fatalf("POST while draining: %d %s", status, body)
		}
	}
	elapsed := time.Since(start)
	during := len(f.records(t))
	f.srv.FlushRecords()
	recs := f.records(t)
	var total int64
	for _, r := range recs {
		total += 1 + r.Serve.Suppressed
	}
	if total != n {
		t.Errorf("%d records account for %d refused requests, want %d", len(recs), total, n)
	}
	if limit := (int(elapsed/refusedWindow) + 1) * (refusedPerWindow + 1); during > limit {
		t.Errorf("%d records during a flood of %v, more than the cap's %d", during, elapsed, limit)
	}
	checkRecords(t, f)
	t.Logf("%d refused requests in %v: %d records", n, elapsed, len(recs))
}

// checkRecords checks every record of f against the audit schema.
func checkRecords(t *testing.T, f *fixture) {
	t.Helper()
	data, err := os.ReadFile(f.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if err := audit.CheckLine(line); err != nil {
			t.Errorf("record %s: %v", line, err)
		}
	}
}

// TestAuditWriteFailure: a record that cannot be written makes the
// execution an error and is counted; the answer says why.
func TestAuditWriteFailure(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, nil)
	f.srv.cfg.AuditLog.Close()
	status, _, body := f.do(t, "POST", "/v1/executions?wait=true", tokenB, map[string]any{"skill": "beta", "script": "scripts/other.sh"})
	var v client.Execution
	if status != 200 || json.Unmarshal(body, &v) != nil || v.Status != StatusError || !strings.Contains(v.Error, "audit record not written") {
		t.Fatalf("execution: %d %s", status, body)
	}
	_, _, m := f.do(t, "GET", "/metrics", "", nil)
	if !strings.Contains(string(m), "skill_sandbox_audit_write_failures_total 1\n") {
		t.Errorf("metrics:\n%s", m)
	}
}

// TestDuplicateSkillNames: of two skills of one name, the one whose
// folder has the name is listed and run, wherever it comes in the order.
func TestDuplicateSkillNames(t *testing.T) {
	f := newFixture(t, nil)
	root := f.srv.tenants["team-a"].skillDirs[0]
	// "0-copy" sorts before "alpha" and holds a skill named alpha too.
	writeSkill(t, root, "0-copy", map[string]string{"echo.sh": "#!/bin/bash\necho copy\n"})
	md := "---\nname: alpha\ndescription: A copy of alpha in a folder named otherwise.\n---\n"
	if err := os.WriteFile(filepath.Join(root, "0-copy", "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, body := f.do(t, "GET", "/v1/skills", tokenA, nil)
	var list skillList
	if err := json.Unmarshal(body, &list); err != nil || len(list.Skills) != 1 || strings.Contains(list.Skills[0].Description, "copy") {
		t.Errorf("skills: %s", body)
	}
	_, _, body = f.do(t, "GET", "/v1/skills/alpha", tokenA, nil)
	if strings.Contains(string(body), "copy") {
		t.Errorf("skill: %s", body)
	}
	sk, ok := f.srv.lookup(f.srv.tenants["team-a"], "alpha")
	if !ok || filepath.Base(sk.path) != "alpha" {
		t.Errorf("lookup found %s", sk.path)
	}
}

// TestRetention: past KeepRuns finished executions of a tenant the oldest
// is deleted with its folder; past Keep every finished one is.
func TestRetention(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, func(c *Config) { c.KeepRuns, c.Keep = 1, 200*time.Millisecond })
	body := map[string]any{"skill": "beta", "script": "scripts/other.sh"}
	var ids []string
	for range 2 {
		_, _, b := f.do(t, "POST", "/v1/executions?wait=true", tokenB, body)
		var e client.Execution
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	if status, _, _ := f.do(t, "GET", "/v1/executions/"+ids[0], tokenB, nil); status != 404 {
		t.Errorf("the older execution past KeepRuns: %d", status)
	}
	if _, err := os.Stat(filepath.Join(f.srv.cfg.WorkDir, ids[0])); !os.IsNotExist(err) {
		t.Errorf("its folder: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if status, _, _ := f.do(t, "GET", "/v1/executions/"+ids[1], tokenB, nil); status == 404 {
			if _, err := os.Stat(filepath.Join(f.srv.cfg.WorkDir, ids[1])); !os.IsNotExist(err) {
				t.Errorf("expired execution's folder: %v", err)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Error("the execution is kept past Keep")
}
