package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrepareServers: skill-sandbox mcp lists a skill's environment as
// not prepared, refuses prepare_skill without --allow-prepare, builds it
// with it from the operator's index, then runs the script with the
// package; a changed environment is listed as changed and its runs are
// refused; skill-sandbox serve lists and uses the same environments.
func TestPrepareServers(t *testing.T) {
	if out, err := exec.Command("/usr/bin/python3", "-c", "import venv, pip").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("/usr/bin/python3 has no venv or pip: %v %s", err, out)
		}
		t.Skipf("/usr/bin/python3 has no venv or pip (Debian: python3-venv, python3-pip): %v %s", err, out)
	}
	requireSandbox(t, newSkill(t, nil))
	srv, downloads := cliIndex(t)
	// demo-pkg>=1 is a key of its own: TestPrepareCLI's prune leaves it.
	skill := newSkill(t, map[string]string{"requirements.txt": "demo-pkg>=1\n", "scripts/use.py": "import demo_pkg\nprint(demo_pkg.X)\n"})
	name := filepath.Base(skill)
	use := map[string]any{"skill": name, "script": "use.py"}

	off := startMCPProc(t, "--skills", skill)
	if st := off.skillEnvState(); st != "not_prepared" {
		t.Errorf("list_skills before prepare: state %v", st)
	}
	if _, isErr, msg := off.call("prepare_skill", map[string]any{"skill": name}); !isErr || !strings.Contains(msg, "unknown tool") {
		t.Errorf("prepare_skill without --allow-prepare: %v %s", isErr, msg)
	}
	if out, isErr, _ := off.call("run_skill_script", use); !isErr || !strings.Contains(dig(out, "stderr", "text"), "No module named 'demo_pkg'") {
		t.Errorf("run before prepare: %v", out)
	}
	if downloads.Load() != 0 {
		t.Fatalf("%d downloads without --allow-prepare", downloads.Load())
	}

	on := startMCPProc(t, "--skills", skill, "--allow-prepare", "--index", srv.URL+"/simple")
	out, isErr, text := on.call("prepare_skill", map[string]any{"skill": name})
	if isErr || downloads.Load() != 1 {
		t.Fatalf("prepare_skill: %v, %d downloads: %s\n%s", isErr, downloads.Load(), text, on.stderr.String())
	}
	envDir, _ := out["environment"].(map[string]any)["path"].(string)
	if st := on.skillEnvState(); st != "prepared" {
		t.Errorf("list_skills after prepare: state %v", st)
	}
	out, isErr, _ = on.call("run_skill_script", use)
	if isErr || dig(out, "stdout", "text") != "42\n" || out["environment"] == nil {
		t.Errorf("run after prepare: %v", out)
	}
	if _, isErr, _ = on.call("prepare_skill", map[string]any{"skill": name}); isErr || downloads.Load() != 1 {
		t.Errorf("second prepare_skill: error %v, %d downloads", isErr, downloads.Load())
	}

	// The REST server lists it prepared and runs with it.
	sv := startServe(t, "--tokens", writeTokens(t, filepath.Dir(skill)))
	if st := serveEnvState(t, sv); st != "prepared" {
		t.Errorf("GET /v1/skills: environment state %v", st)
	}
	code, body := servePost(t, sv, `{"skill":"`+name+`","script":"use.py"}`)
	if code != http.StatusOK || !strings.Contains(body, `"text":"42\n"`) {
		t.Errorf("serve execution: %d %s", code, body)
	}

	mods, _ := filepath.Glob(filepath.Join(envDir, "lib", "python3*", "site-packages", "demo_pkg", "__init__.py"))
	if len(mods) != 1 {
		t.Fatalf("module in the environment %s: %v", envDir, mods)
	}
	if err := os.WriteFile(mods[0], []byte("X = 'tampered'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := on.skillEnvState(); st != "changed" {
		t.Errorf("list_skills after the change: state %v", st)
	}
	if out, isErr, _ := on.call("run_skill_script", use); !isErr || !strings.Contains(out["error"].(string), "changed since it was built") {
		t.Errorf("run of a changed environment: %v", out)
	}
	if st := serveEnvState(t, sv); st != "changed" {
		t.Errorf("GET /v1/skills after the change: state %v", st)
	}
	if code, body := servePost(t, sv, `{"skill":"`+name+`","script":"use.py"}`); code != http.StatusUnprocessableEntity || !strings.Contains(body, "changed since it was built") {
		t.Errorf("serve execution of a changed environment: %d %s", code, body)
	}
	os.RemoveAll(envDir)
}

// dig returns the string at path in nested maps, or "".
func dig(m map[string]any, path ...string) string {
	var v any = m
	for _, k := range path {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	s, _ := v.(string)
	return s
}

// serveEnvState returns the environment state GET /v1/skills shows for
// the first skill.
func serveEnvState(t *testing.T, p *serveProc) any {
	t.Helper()
	req, _ := http.NewRequest("GET", p.url+"/v1/skills", nil)
	req.Header.Set("Authorization", "Bearer "+serveToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Skills []struct {
			Environment *struct{ State string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Skills) != 1 || list.Skills[0].Environment == nil {
		t.Fatalf("GET /v1/skills: %v %+v", err, list)
	}
	return list.Skills[0].Environment.State
}

// servePost runs an execution to its end (?wait=true).
func servePost(t *testing.T, p *serveProc, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", p.url+"/v1/executions?wait=true", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+serveToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}
