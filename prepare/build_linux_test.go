package prepare

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/internal/tempmode"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run"
)

func TestMain(m *testing.M) {
	run.ExecInitIfRequested()
	os.Exit(tempmode.Guard(m.Run))
}

// needBuild skips where the sandbox cannot run commands with a host
// allowlist, or python3 has no venv with pip.
func needBuild(t *testing.T) Python {
	t.Helper()
	py, err := FindPython(context.Background())
	if err != nil {
		t.Skip(err)
	}
	if out, err := exec.Command(py.Path, "-c", "import venv, pip").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" { // .ci/run installs them
			t.Fatalf("%s has no venv or pip (Debian: python3-venv, python3-pip): %v %s", py.Path, err, out)
		}
		t.Skipf("%s has no venv or pip (Debian: python3-venv, python3-pip): %v %s", py.Path, err, out)
	}
	needSandbox(t)
	return py
}

// needSandbox skips where the sandbox cannot run commands with a host
// allowlist.
func needSandbox(t *testing.T) {
	t.Helper()
	sb := run.Sandbox{SkillDir: t.TempDir(), AllowHosts: []string{"127.0.0.1"}}
	if _, err := sb.Command(context.Background(), []string{"true"}); err != nil {
		if errors.Is(err, run.ErrIsolation) {
			t.Skipf("no sandbox with a host allowlist here: %v", err)
		}
		t.Fatal(err)
	}
}

func TestBuildLookupTamper(t *testing.T) {
	py := needBuild(t)
	ix := newTestIndex(t)
	file, data := testWheel(t, "demo-pkg", "1.0", "X = 42\ndef main():\n    print('cli', X)\n", "demo-cli = demo_pkg:main")
	ix.add("demo-pkg", file, data)
	skill := t.TempDir()
	if err := os.WriteFile(filepath.Join(skill, RequirementsFile), []byte("demo_pkg==1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deps, err := Load(skill)
	if err != nil || deps == nil {
		t.Fatalf("Load: %v %v", deps, err)
	}
	c := Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	key := Key(deps, py)
	if _, err := c.Lookup(key); !errors.Is(err, ErrNotPrepared) {
		t.Fatalf("Lookup before Build: %v", err)
	}
	var out strings.Builder
	env, res, err := c.Build(context.Background(), deps, py, BuildOptions{Index: ix.URL + "/simple",
		Sandbox: run.Sandbox{Stdout: &out, Stderr: &out}})
	if err != nil {
		t.Fatalf("Build: %v\n%s", err, out.String())
	}
	if res.Network == nil || res.Network.Total == 0 || ix.downloads != 1 {
		t.Errorf("pip reached the index %d times, network %+v", ix.downloads, res.Network)
	}
	if len(env.Installed) != 1 || env.Installed[0].Name != "demo-pkg" || env.Installed[0].Version != "1.0" || len(env.Installed[0].SHA256) != 64 {
		t.Errorf("installed %+v", env.Installed)
	}
	got, err := c.Lookup(key)
	if err != nil || got.Digest != env.Digest {
		t.Fatalf("Lookup after Build: %v %v", got, err)
	}
	cmd := exec.Command(env.Python(), "-c", "import demo_pkg; print(demo_pkg.X)")
	if o, err := cmd.CombinedOutput(); err != nil || string(o) != "42\n" {
		t.Errorf("the environment's python: %v %s", err, o)
	}
	// The console script runs, on the host and in a run (the cache at
	// its own path, read-only).
	cli := filepath.Join(env.Dir, "bin", "demo-cli")
	if o, err := exec.Command(cli).CombinedOutput(); err != nil || string(o) != "cli 42\n" {
		t.Errorf("console script on the host: %v %s", err, o)
	}
	out.Reset()
	sb := run.Sandbox{SkillDir: skill, Interpreters: []string{env.Python()}, Stdout: &out, Stderr: &out}
	if res, err := sb.Command(context.Background(), []string{"demo-cli"}); err != nil || res.ExitCode != 0 || out.String() != "cli 42\n" {
		t.Errorf("console script in a run: %v %+v %s", err, res, out.String())
	}
	// Every kind of change is seen.
	mod := filepath.Join(env.Dir, "lib")
	matches, _ := filepath.Glob(filepath.Join(mod, "python3*", "site-packages", "demo_pkg", "__init__.py"))
	if len(matches) != 1 {
		t.Fatalf("module file not found: %v", matches)
	}
	if err := os.WriteFile(matches[0], []byte("import os; os.system('id')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Lookup(key); !errors.Is(err, ErrTampered) {
		t.Fatalf("Lookup of a changed file: %v", err)
	}
	// Build replaces a tampered environment (a build is not
	// byte-reproducible: compiled files, pyvenv.cfg's command line).
	env2, _, err := c.Build(context.Background(), deps, py, BuildOptions{Index: ix.URL + "/simple"})
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if got, err := c.Lookup(key); err != nil || got.Digest != env2.Digest {
		t.Fatalf("Lookup after the rebuild: %v %v", got, err)
	}
	if entries := cacheEntries(c.Dir); len(entries) != 1 {
		t.Errorf("cache holds %d entries, want 1 (temporary folders left?)", len(entries))
	}
}

// TestBuildHashes: a hash in requirements.txt makes pip check it
// (--require-hashes): the right one installs, a wrong one fails the
// build with pip's reason.
func TestBuildHashes(t *testing.T) {
	py := needBuild(t)
	ix := newTestIndex(t)
	file, data := testWheel(t, "hashed-pkg", "1.0", "X = 1\n")
	ix.add("hashed-pkg", file, data)
	c := Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	good := fmt.Sprintf("%x", sha256.Sum256(data))
	for _, tt := range []struct {
		hash, want string
	}{
		{hashA, "THESE PACKAGES DO NOT MATCH THE HASHES"},
		{good, ""},
	} {
		reqs, err := ParseRequirements("r", []byte("hashed-pkg==1.0 --hash=sha256:"+tt.hash+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		env, _, err := c.Build(context.Background(), &Deps{Requirements: reqs, Normalised: Normalise(reqs)}, py,
			BuildOptions{Index: ix.URL + "/simple", Sandbox: run.Sandbox{Stdout: &out, Stderr: &out}})
		if tt.want == "" {
			if err != nil || len(env.Installed) != 1 || env.Installed[0].SHA256 != good {
				t.Errorf("right hash: %v %+v\n%s", err, env, out.String())
			}
			continue
		}
		if err == nil || !strings.Contains(out.String(), tt.want) {
			t.Errorf("wrong hash: %v\n%s", err, out.String())
		}
	}
}
