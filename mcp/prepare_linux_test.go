package mcp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// pySkillDir returns a skills folder with one skill, "needs-pkg", whose
// requirements.txt asks for demo-pkg.
func pySkillDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	files := map[string]string{
		"needs-pkg/SKILL.md":         "---\nname: needs-pkg\ndescription: A skill that needs a Python package, for the prepare tests.\n---\n# Needs\n",
		"needs-pkg/requirements.txt": "demo-pkg==1.0\n",
		"needs-pkg/scripts/use.py":   "import demo_pkg\nprint(demo_pkg.X)\n",
	}
	for name, body := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return base
}

// stallingIndex is a package index that answers nothing until the
// request is given up; hits counts the requests.
func stallingIndex(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// TestPrepareSkillOff: without AllowPrepare an agent cannot build an
// environment: prepare_skill is not listed and a call to it is an
// unknown tool; list_skills shows the skill needs preparing; the index
// gets no request and the cache stays empty.
func TestPrepareSkillOff(t *testing.T) {
	ix, hits := stallingIndex(t)
	cache := prepare.Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	for _, cfg := range []Config{
		{Environments: cache, Prepare: prepare.BuildOptions{Index: ix.URL + "/simple"}},
		{AllowPrepare: true, Prepare: prepare.BuildOptions{Index: ix.URL + "/simple"}}, // no cache: nowhere to build
	} {
		cfg.SkillDirs = []string{pySkillDir(t)}
		c := newClient(t, cfg)
		c.initialize()
		tools, _ := dig(c.request("tools/list", nil), "result", "tools").([]any)
		for _, tl := range tools {
			if dig(tl, "name") == ToolPrepareSkill {
				t.Errorf("prepare_skill listed with AllowPrepare %v, cache %q", cfg.AllowPrepare, cfg.Environments.Dir)
			}
		}
		r := c.request("tools/call", map[string]any{"name": ToolPrepareSkill, "arguments": map[string]any{"skill": "needs-pkg"}})
		if msg, _ := dig(r, "error", "message").(string); !strings.Contains(msg, "unknown tool") {
			t.Errorf("prepare_skill with AllowPrepare %v: %v", cfg.AllowPrepare, r)
		}
		env := dig(c.call(ToolListSkills, map[string]any{}), "structuredContent", "skills", 0, "environment")
		if cfg.Environments.Dir != "" && (dig(env, "state") != prepare.StateNotPrepared || dig(env, "file") == nil) {
			t.Errorf("list_skills environment %v, want not_prepared", env)
		}
		if cfg.Environments.Dir == "" && env != nil {
			t.Errorf("list_skills environment %v without a cache", env)
		}
		c.close()
	}
	if hits.Load() != 0 {
		t.Errorf("the index got %d requests", hits.Load())
	}
	if _, err := os.Stat(cache.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cache folder made: %v", err)
	}
}

// needPrepare skips where pip cannot run in the sandbox.
func needPrepare(t *testing.T) {
	t.Helper()
	py, err := prepare.FindPython(context.Background())
	if err != nil {
		t.Skip(err)
	}
	if out, err := exec.Command(py.Path, "-c", "import venv, pip").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s has no venv or pip: %v %s", py.Path, err, out)
		}
		t.Skipf("%s has no venv or pip (Debian: python3-venv, python3-pip): %v %s", py.Path, err, out)
	}
	sb := run.Sandbox{SkillDir: t.TempDir(), AllowHosts: []string{"127.0.0.1"}}
	if _, err := sb.Command(context.Background(), []string{"true"}); errors.Is(err, run.ErrIsolation) {
		t.Skipf("no sandbox with a host allowlist here: %v", err)
	}
}

// TestPrepareSkillLimits: with AllowPrepare the operator's limits hold:
// the agent cannot name another index (an unknown argument), a second
// build while one is under way is refused, and the build stops at the
// operator's time limit, leaving nothing in the cache.
func TestPrepareSkillLimits(t *testing.T) {
	needPrepare(t)
	ix, hits := stallingIndex(t)
	other, otherHits := stallingIndex(t)
	cache := prepare.Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	c := newClient(t, Config{SkillDirs: []string{pySkillDir(t)}, Environments: cache, AllowPrepare: true, MaxRuns: 4,
		Prepare: prepare.BuildOptions{Index: ix.URL + "/simple", Sandbox: run.Sandbox{Timeout: 8 * time.Second}}})
	c.initialize()
	res := c.call(ToolPrepareSkill, map[string]any{"skill": "needs-pkg", "index": other.URL + "/simple"})
	if res["isError"] != true || !strings.Contains(dig(res, "content", 0, "text").(string), "unknown field") {
		t.Errorf("prepare_skill with an index argument: %v", res)
	}
	first := c.send("tools/call", map[string]any{"name": ToolPrepareSkill, "arguments": map[string]any{"skill": "needs-pkg"}})
	deadline := time.Now().Add(30 * time.Second)
	for hits.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("pip never reached the index; log:\n%s", c.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	res = c.call(ToolPrepareSkill, map[string]any{"skill": "needs-pkg"})
	if res["isError"] != true || !strings.Contains(dig(res, "structuredContent", "error").(string), "under way") {
		t.Errorf("second prepare_skill during the first: %v", dig(res, "structuredContent"))
	}
	r, _ := dig(c.waitFor(first), "result").(map[string]any)
	if r["isError"] != true || dig(r, "structuredContent", "outcome") != "timed_out" {
		t.Errorf("stalled build: %v", dig(r, "structuredContent"))
	}
	entries, _ := os.ReadDir(cache.Dir)
	if len(entries) != 0 {
		t.Errorf("cache after the failed build: %v", entries)
	}
	if otherHits.Load() != 0 {
		t.Errorf("the index the agent named got %d requests", otherHits.Load())
	}
	// One record per call: the two refusals and the build.
	c.close()
	recs := records(t, c.log.String())
	var outcomes []string
	for _, r := range recs {
		if r.MCP == nil || r.MCP.Tool != ToolPrepareSkill {
			t.Errorf("record of tool %+v", r.MCP)
		}
		outcomes = append(outcomes, string(r.Outcome))
	}
	if len(recs) == 3 && recs[2].TimeoutMS != 8000 {
		t.Errorf("the build's record names the time limit %d ms, want the build's 8000", recs[2].TimeoutMS)
	}
	if strings.Join(outcomes, " ") != "refused refused timed_out" {
		t.Errorf("record outcomes %v, want refused refused timed_out", outcomes)
	}
}
