package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// openAPIDoc is the part of the OpenAPI document the test reads.
type openAPIDoc struct {
	OpenAPI    string                           `json:"openapi"`
	Paths      map[string]map[string]openAPIOp  `json:"paths"`
	Components struct{ Schemas map[string]any } `json:"components"`
	Security   []map[string][]string            `json:"security"`
}

type openAPIOp struct {
	Security  *[]map[string][]string `json:"security"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema any `json:"schema"`
		} `json:"content"`
		Headers map[string]any `json:"headers"`
	} `json:"responses"`
}

// exchange is one request and answer the server gave in the test.
type exchange struct {
	method, path string
	status       int
	header       http.Header
	body         []byte
}

// TestOpenAPI checks the server against serve/openapi.json: the document
// has exactly the server's routes; every answer of a session exercising
// each route (successes, refusals, 401s, 404s of another tenant) has a
// status the document lists for its route, with the content type and a
// body that matches the schema; every route was exercised.
func TestOpenAPI(t *testing.T) {
	needSandbox(t)
	var doc openAPIDoc
	dec := json.NewDecoder(bytes.NewReader(openAPIDocument))
	if err := dec.Decode(&doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi.json: %v (version %q)", err, doc.OpenAPI)
	}
	f := newFixture(t, func(c *Config) { c.MaxRuns, c.Queue, c.MaxBodyBytes = 1, 1, 64<<10 })
	var documented, served []string
	for p, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	for _, rt := range f.srv.routes() {
		served = append(served, rt.method+" "+rt.path)
		op := doc.Paths[rt.path][strings.ToLower(rt.method)]
		if open := op.Security != nil && len(*op.Security) == 0; open != (rt.open != nil) {
			t.Errorf("%s %s: the document says open=%v", rt.method, rt.path, open)
		}
	}
	sort.Strings(documented)
	sort.Strings(served)
	if !slices.Equal(documented, served) {
		t.Fatalf("routes differ:\ndocument %q\nserver   %q", documented, served)
	}
	var log []exchange
	rec := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := httptest.NewRecorder()
		f.srv.Handler().ServeHTTP(cw, r)
		log = append(log, exchange{r.Method, r.URL.Path, cw.Code, cw.Header(), cw.Body.Bytes()})
		for k, v := range cw.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(cw.Code)
		w.Write(cw.Body.Bytes())
	})
	f.ts.Config.Handler = rec
	openAPISession(t, f)
	exercised := map[string]bool{}
	for _, x := range log {
		route := matchPath(doc, x.path)
		exercised[x.method+" "+route] = true
		checkExchange(t, doc, route, x)
	}
	for _, r := range served {
		if !exercised[r] {
			t.Errorf("route %s not exercised", r)
		}
	}
}

// openAPISession exercises every route, with successes and refusals.
func openAPISession(t *testing.T, f *fixture) {
	dir := filepath.Join(f.srv.tenants["team-a"].skillDirs[0], "alpha", "scripts")
	if err := os.WriteFile(filepath.Join(dir, "slow.sh"), []byte("#!/bin/bash\nsleep 0.5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics", "/v1/openapi.json", "/v1/skills", "/v1/skills/alpha", "/v1/skills/beta", "/v1/executions/nope", "/v1/executions/nope/artifacts/x"} {
		f.do(t, "GET", p, tokenA, nil)
	}
	f.do(t, "GET", "/v1/skills", "", nil)
	f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "alpha", "bogus": 1})
	f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "beta"})
	f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "alpha", "stdin": strings.Repeat("x", 100<<10)})
	req, _ := http.NewRequest("POST", f.ts.URL+"/v1/executions", strings.NewReader("skill=alpha"))
	req.Header.Set("Authorization", "Bearer "+tokenA)
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := f.ts.Client().Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	v := runEcho(t, f)
	f.do(t, "GET", "/v1/executions/"+v.ID, tokenA, nil)
	f.do(t, "GET", "/v1/executions/"+v.ID, tokenB, nil)
	f.do(t, "GET", "/v1/executions/"+v.ID+"/artifacts/out/report.txt", tokenA, nil)
	f.do(t, "GET", "/v1/executions/"+v.ID+"/artifacts/out/report.txt", tokenB, nil)
	e := f.srv.tenants["team-a"].get(v.ID)
	os.Remove(filepath.Join(e.dir, "out", "report.txt"))
	os.Symlink("/etc/passwd", filepath.Join(e.dir, "out", "report.txt"))
	f.do(t, "GET", "/v1/executions/"+v.ID+"/artifacts/out/report.txt", tokenA, nil)
	var locs []string
	for range 3 {
		status, h, _ := f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "alpha", "script": "scripts/slow.sh"})
		if status == http.StatusAccepted {
			locs = append(locs, h.Get("Location"))
		}
	}
	for _, l := range locs {
		waitExecution(t, f, l, tokenA)
	}
}

// matchPath returns the document's path template that path matches.
func matchPath(doc openAPIDoc, path string) string {
	best := ""
	for p := range doc.Paths {
		re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[a-z]+\\\}`).ReplaceAllStringFunc(regexp.QuoteMeta(p), func(s string) string {
			if s == `\{path\}` {
				return ".+"
			}
			return "[^/]+"
		}) + "$")
		if re.MatchString(path) && (best == "" || !strings.Contains(p, "{") && strings.Contains(best, "{")) {
			best = p
		}
	}
	return best
}

// checkExchange checks one answer against the document.
func checkExchange(t *testing.T, doc openAPIDoc, route string, x exchange) {
	t.Helper()
	where := fmt.Sprintf("%s %s -> %d", x.method, x.path, x.status)
	if route == "" {
		if x.status != http.StatusNotFound && x.status != http.StatusUnauthorized {
			t.Errorf("%s: undocumented path answered", where)
		}
		return
	}
	op, ok := doc.Paths[route][strings.ToLower(x.method)]
	if !ok {
		t.Errorf("%s: method not documented", where)
		return
	}
	resp, ok := op.Responses[fmt.Sprint(x.status)]
	if !ok {
		t.Errorf("%s: status not documented for %s", where, route)
		return
	}
	for h := range resp.Headers {
		if x.header.Get(h) == "" {
			t.Errorf("%s: header %s missing", where, h)
		}
	}
	ct, _, _ := mime.ParseMediaType(x.header.Get("Content-Type"))
	media, ok := resp.Content[ct]
	if !ok {
		t.Errorf("%s: content type %q not documented", where, ct)
		return
	}
	if ct != "application/json" && ct != "application/problem+json" {
		return
	}
	var body any
	if err := json.Unmarshal(x.body, &body); err != nil {
		t.Errorf("%s: body is not JSON: %v", where, err)
		return
	}
	if err := checkSchema(doc, media.Schema, body, "$"); err != nil {
		t.Errorf("%s: %v\n%s", where, err, x.body)
	}
}

// checkSchema checks v against the subset of JSON Schema the document uses:
// $ref, type, enum, properties, required, additionalProperties false,
// items.
func checkSchema(doc openAPIDoc, schema, v any, at string) error {
	s, _ := schema.(map[string]any)
	if ref, ok := s["$ref"].(string); ok {
		return checkSchema(doc, doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")], v, at)
	}
	if typ, ok := s["type"].(string); ok && !hasType(typ, v) {
		return fmt.Errorf("%s: want %s, got %T", at, typ, v)
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		return fmt.Errorf("%s: %v is not one of %v", at, v, enum)
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := v[r]; !ok {
				return fmt.Errorf("%s: %q is required", at, r)
			}
		}
		for k, val := range v {
			ps, ok := props[k]
			if !ok {
				if s["additionalProperties"] == false {
					return fmt.Errorf("%s: %q is not in the schema", at, k)
				}
				continue
			}
			if err := checkSchema(doc, ps, val, at+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i, item := range v {
			if err := checkSchema(doc, s["items"], item, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasType(typ string, v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return typ == "object"
	case []any:
		return typ == "array"
	case string:
		return typ == "string"
	case bool:
		return typ == "boolean"
	case float64:
		return typ == "number" || typ == "integer" && v == float64(int64(v))
	case nil:
		return typ == "null"
	}
	return false
}

func asStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
