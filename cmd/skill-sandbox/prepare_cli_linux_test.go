package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestPrepareCLI: prepare builds a skill's requirements from a simple
// index on loopback (a wheel made here), run imports the package, a
// second skill with the same requirements reuses the environment (no
// second download), and a skill whose environment is missing is refused
// with the command that prepares it.
func TestPrepareCLI(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // its own cache: prune counts what this test made
	if out, err := exec.Command("/usr/bin/python3", "-c", "import venv, pip").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" { // .ci/run installs them
			t.Fatalf("/usr/bin/python3 has no venv or pip: %v %s", err, out)
		}
		t.Skipf("/usr/bin/python3 has no venv or pip (Debian: python3-venv, python3-pip): %v %s", err, out)
	}
	srv, downloads := cliIndex(t)
	files := map[string]string{"requirements.txt": "demo-pkg==1.0\n", "scripts/use.py": "import demo_pkg\nprint(demo_pkg.X)\n"}
	skill := newSkill(t, files)
	requireSandbox(t, newSkill(t, nil))

	// Unprepared: the run goes ahead with the host's packages (which
	// lack demo_pkg here), after a warning that says how to prepare it.
	r := runCLI(t, "", "run", skill, "use.py")
	if r.Code != 1 || !strings.Contains(r.Stderr, "warning: environment not prepared") ||
		!strings.Contains(r.Stderr, "prepare it with: skill-sandbox prepare "+skill) ||
		!strings.Contains(r.Stderr, "No module named 'demo_pkg'") {
		t.Fatalf("unprepared run: exit %d stderr %s", r.Code, r.Stderr)
	}
	// A requirements file the parser refuses does not block a script
	// that needs nothing from it.
	odd := newSkill(t, map[string]string{"requirements.txt": "-e .\n", "scripts/hi.py": "print('hi')\n"})
	if r := runCLI(t, "", "run", odd, "hi.py"); r.Code != 0 || r.Stdout != "hi\n" || !strings.Contains(r.Stderr, "warning: the skill's requirements") {
		t.Errorf("refused requirements file: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, "", "prepare", "--check", skill)
	if r.Code != 1 || !strings.Contains(r.Stderr, "environment not prepared") {
		t.Errorf("prepare --check: exit %d stderr %s", r.Code, r.Stderr)
	}
	r = runCLI(t, "", "prepare", "--index", srv.URL+"/simple", skill)
	if r.Code != 0 || downloads.Load() != 1 {
		t.Fatalf("prepare: exit %d, %d downloads\nstdout %s\nstderr %s", r.Code, downloads.Load(), r.Stdout, r.Stderr)
	}
	rec := stderrRecord(t, r.Stderr)
	if e := rec.Environment; e == nil || !e.Built || len(e.Installed) != 1 || e.Installed[0].Name != "demo-pkg" || len(e.Installed[0].SHA256) != 64 {
		t.Errorf("prepare record environment %+v", rec.Environment)
	}
	r = runCLI(t, "", "audit", skill, "use.py")
	if r.Code != 0 || r.Stdout != "42\n" {
		t.Fatalf("run: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if e := stderrRecord(t, r.Stderr).Environment; e == nil || e.Built || e.Digest != rec.Environment.Digest {
		t.Errorf("run record environment %+v, want digest %s", e, rec.Environment.Digest)
	}
	// The same requirement in a pyproject.toml, spelt differently.
	other := newSkill(t, map[string]string{"pyproject.toml": "[project]\nname = \"other\"\ndependencies = [\n  \"Demo_Pkg == 1.0\",  # same\n]\n",
		"scripts/use.py": files["scripts/use.py"]})
	r = runCLI(t, "", "prepare", "--index", srv.URL+"/simple", other)
	if r.Code != 0 || downloads.Load() != 1 || !strings.Contains(r.Stdout, "already prepared") {
		t.Errorf("second skill: exit %d, %d downloads, stdout %s stderr %s", r.Code, downloads.Load(), r.Stdout, r.Stderr)
	}
	if rec := stderrRecord(t, r.Stderr); rec.Outcome != "not_run" || rec.Level != "info" || rec.Environment == nil || rec.Environment.Built {
		t.Errorf("second skill's record: outcome %s level %s environment %+v", rec.Outcome, rec.Level, rec.Environment)
	}
	if r := runCLI(t, "", "run", other, "use.py"); r.Code != 0 || r.Stdout != "42\n" {
		t.Errorf("run of the pyproject.toml skill: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	// A changed file of the environment refuses the run, with the way
	// out; prepare rebuilds it.
	mods, _ := filepath.Glob(filepath.Join(rec.Environment.Path, "lib", "python3*", "site-packages", "demo_pkg", "__init__.py"))
	if len(mods) != 1 {
		t.Fatalf("module in the environment: %v", mods)
	}
	if err := os.WriteFile(mods[0], []byte("X = 'tampered'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "run", skill, "use.py")
	if r.Code != 1 || !strings.Contains(r.Stderr, "environment changed since it was built") || !strings.Contains(r.Stderr, "prepare it with: skill-sandbox prepare") {
		t.Errorf("tampered environment: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, "", "prepare", "--index", srv.URL+"/simple", skill)
	if r.Code != 0 || downloads.Load() != 2 || !strings.Contains(r.Stdout, skill+" prepared") {
		t.Errorf("rebuild: exit %d, %d downloads, stdout %s stderr %s", r.Code, downloads.Load(), r.Stdout, r.Stderr)
	}
	if r = runCLI(t, "", "run", skill, "use.py"); r.Code != 0 || r.Stdout != "42\n" {
		t.Errorf("run after the rebuild: exit %d stdout %q stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	// run --prepare builds on first use, then runs.
	third := newSkill(t, map[string]string{"requirements.txt": "demo-pkg\n", "scripts/use.py": files["scripts/use.py"]})
	// The index from the operator policy.
	pol := filepath.Join(t.TempDir(), "operator.toml")
	if err := os.WriteFile(pol, []byte("[sandbox]\npackage_index = \""+srv.URL+"/simple\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, "", "audit", "--prepare", "--policy", pol, third, "use.py")
	if e := stderrRecord(t, r.Stderr).Environment; r.Code != 0 || r.Stdout != "42\n" || downloads.Load() != 3 || e == nil || !e.Built {
		t.Errorf("run --prepare: exit %d stdout %q, %d downloads, environment %+v\nstderr %s", r.Code, r.Stdout, downloads.Load(), e, r.Stderr)
	}
	// --prune keeps what the skills named need, and removes the rest.
	r = runCLI(t, "", "prepare", "--prune", filepath.Dir(other), third)
	if r.Code != 0 || !strings.Contains(r.Stdout, "0 environments removed, 0 bytes; 2 kept") {
		t.Errorf("prune keeping: exit %d stdout %s stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, "", "prepare", "--prune", newSkill(t, nil))
	if r.Code != 0 || !strings.Contains(r.Stdout, "removed "+rec.Environment.Path) || stderrRecord(t, r.Stderr).Outcome != "not_run" {
		t.Errorf("prune: exit %d stdout %s stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	if r = runCLI(t, "", "prepare", "--check", skill); r.Code != 1 {
		t.Errorf("--check after the prune: exit %d", r.Code)
	}
	r = runCLI(t, "", "run", "--no-deps", skill, "use.py")
	if r.Code == 0 || !strings.Contains(r.Stderr, "No module named 'demo_pkg'") {
		t.Errorf("--no-deps: exit %d stderr %s", r.Code, r.Stderr)
	}
}

// cliIndex serves a simple index of cliWheel on loopback; downloads
// counts the wheel's downloads.
func cliIndex(t *testing.T) (*httptest.Server, *atomic.Int32) {
	wheel := cliWheel(t)
	var downloads atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/demo-pkg/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<a href=\"/files/demo_pkg-1.0-py3-none-any.whl#sha256=%x\">demo_pkg-1.0-py3-none-any.whl</a>\n", sha256.Sum256(wheel))
	})
	mux.HandleFunc("/files/demo_pkg-1.0-py3-none-any.whl", func(w http.ResponseWriter, r *http.Request) {
		downloads.Add(1)
		w.Write(wheel)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &downloads
}

// cliWheel is a pure-Python wheel of demo-pkg 1.0 whose module holds X = 42.
func cliWheel(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	info := "demo_pkg-1.0.dist-info/"
	for _, f := range [][2]string{
		{"demo_pkg/__init__.py", "X = 42\n"},
		{info + "METADATA", "Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: skill-sandbox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{info + "RECORD", "demo_pkg/__init__.py,,\n" + info + "METADATA,,\n" + info + "WHEEL,,\n" + info + "RECORD,,\n"},
	} {
		w, err := z.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
