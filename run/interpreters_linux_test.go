package run

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeVenv makes a Python virtual environment by hand, as `python3 -m
// venv` lays it out (no ensurepip needed), under a folder only its owner
// may enter, holding a pure module (vdemo) and a native one
// (vpkg._json, a copy of the standard library's): it returns the venv's
// bin/python3.
func fakeVenv(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys, _json; print('%d.%d' % sys.version_info[:2]); print(_json.__file__)").Output()
	if err != nil {
		t.Skipf("python3 with a shared _json module: %v", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 || !strings.HasSuffix(lines[1], ".so") {
		t.Skipf("_json is not a shared library here: %q", out)
	}
	parent, err := os.MkdirTemp("", "skill-sandbox-venv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	venv := filepath.Join(parent, "venv")
	site := filepath.Join(venv, "lib", "python"+lines[0], "site-packages")
	for _, d := range []string{filepath.Join(venv, "bin"), filepath.Join(site, "vpkg")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	system, err := lookPath("python3", sandboxPath)
	if err != nil {
		t.Fatal(err)
	}
	so, err := os.ReadFile(lines[1])
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"pyvenv.cfg": "home = " + filepath.Dir(system) + "\ninclude-system-site-packages = false\n",
		filepath.Join("lib", "python"+lines[0], "site-packages", "vdemo.py"):                      "WHO = 'venv module'\n",
		filepath.Join("lib", "python"+lines[0], "site-packages", "vpkg", "__init__.py"):           "",
		filepath.Join("lib", "python"+lines[0], "site-packages", "vpkg", filepath.Base(lines[1])): string(so),
	} {
		if err := os.WriteFile(filepath.Join(venv, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	python := filepath.Join(venv, "bin", "python3")
	if err := os.Symlink(system, python); err != nil {
		t.Fatal(err)
	}
	// Only the owner may enter: a root caller's sandbox reaches it
	// through the grant alone.
	if err := os.Chmod(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	return python
}

// TestInterpreterEnvironment runs scripts with a virtual environment named
// in Interpreters: its pure and native modules import, whether python3 is
// the script's interpreter, its shebang or started by a shell; the
// environment stays read-only; and without Interpreters none of it is
// there.
func TestInterpreterEnvironment(t *testing.T) {
	python := fakeVenv(t)
	venv := filepath.Dir(filepath.Dir(python))
	dir := newSkill(t, map[string]string{
		"imp.py":    "import sys, vdemo, vpkg._json\nprint(vdemo.WHO, sys.prefix)\n",
		"bang.py":   "#!/usr/bin/env python3\nimport vdemo\nprint('shebang', vdemo.WHO)\n",
		"shell.sh":  "python3 -c 'import vdemo; print(\"shell\", vdemo.WHO)'\n",
		"native.py": "import sys\nsys.path.insert(0, sys.argv[1])\nimport vpkg._json\nprint('native ok')\n",
		"write.py":  "import sys\ntry:\n    open(sys.argv[1] + '/planted.py', 'w')\n    print('planted')\nexcept OSError as e:\n    print('refused', e.errno)\n",
	})
	sb := Sandbox{Interpreters: []string{python}}
	for script, want := range map[string]string{"imp.py": "venv module " + venv, "bang.py": "shebang venv module", "shell.sh": "shell venv module"} {
		o := runIn(t, sb, dir, script)
		if o.err != nil || o.res.ExitCode != 0 || !strings.Contains(o.stdout, want) {
			t.Errorf("%s: err %v exit %d stdout %q stderr %q", script, o.err, o.res.ExitCode, o.stdout, lastLine(o.stderr))
		}
	}
	if o := runIn(t, sb, dir, "imp.py"); len(o.res.Interpreter) == 0 || o.res.Interpreter[0] != python || !containsPath(o.res.Grants.Read, venv) {
		t.Errorf("interpreter %v, read grants %v: want %s and %s", o.res.Interpreter, o.res.Grants.Read, python, venv)
	}
	if o := runIn(t, sb, dir, "write.py", venv); !strings.Contains(o.stdout, "refused") {
		t.Errorf("the environment is writable: %q %v", o.stdout, o.err)
	}
	if o := runIn(t, Sandbox{}, dir, "imp.py"); o.res.ExitCode == 0 || !strings.Contains(o.stderr, "No module named 'vdemo'") {
		t.Errorf("without Interpreters: exit %d stderr %q", o.res.ExitCode, lastLine(o.stderr))
	}
	// The same environment as a plain read grant: readable, not
	// executable (noexec), so its native module does not load.
	site := filepath.Dir(filepath.Dir(mustGlob(t, filepath.Join(venv, "lib", "python*", "site-packages", "vpkg", "__init__.py"))))
	if o := runIn(t, sb, dir, "native.py", site); !strings.Contains(o.stdout, "native ok") {
		t.Errorf("native module with Interpreters: stdout %q stderr %q", o.stdout, lastLine(o.stderr))
	}
	o := runIn(t, Sandbox{ReadPaths: []string{venv}}, dir, "native.py", site)
	if strings.Contains(o.stdout, "native ok") || !strings.Contains(o.stderr, "failed to map segment") {
		t.Errorf("a native module from a plain read grant: stdout %q stderr %q", o.stdout, lastLine(o.stderr))
	}
}

// TestInterpreterRefused checks the interpreters that are refused before
// anything runs.
func TestInterpreterRefused(t *testing.T) {
	dir := newSkill(t, map[string]string{"ok.py": "print('ok')\n"})
	notExec := filepath.Join(t.TempDir(), "python3")
	os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644)
	home := t.TempDir()
	t.Setenv("HOME", home)
	homePython := filepath.Join(home, "bin", "python3")
	if err := os.Mkdir(filepath.Dir(homePython), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/bin/python3", homePython); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error
	}{
		{"venv/bin/python3", ErrBadConfig},
		// Its environment would be the whole home folder.
		{homePython, ErrBadConfig},
		{"/no/such/bin/python3", ErrNoInterpreter},
		{notExec, ErrNoInterpreter},
	} {
		o := runIn(t, Sandbox{Interpreters: []string{c.path}}, dir, "ok.py")
		if !errors.Is(o.err, c.want) || o.res.Started {
			t.Errorf("%s: err %v, want %v and no start", c.path, o.err, c.want)
		}
	}
}

func containsPath(list []string, p string) bool {
	r, _ := filepath.EvalSymlinks(p)
	for _, x := range list {
		if x == p || x == r {
			return true
		}
	}
	return false
}

// mustGlob returns the one match of pattern.
func mustGlob(t *testing.T, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) != 1 {
		t.Fatalf("%s: %v %v", pattern, m, err)
	}
	return m[0]
}
