package run

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readOnlyScript tries, inside the write grant argv[1] whose part keep/ is
// read-only: read keep/f.txt, overwrite it, create and delete in keep/,
// rename keep away and write beside it. It prints one "label: result"
// line each.
const readOnlyScript = `import os, sys
w = sys.argv[1]
k = os.path.join(w, "keep")
def t(label, fn):
    try:
        r = fn()
        print(label + ": ok " + (r or ""))
    except OSError as e:
        print(label + ": " + os.strerror(e.errno))
t("read", lambda: open(os.path.join(k, "f.txt")).read().strip())
t("overwrite", lambda: open(os.path.join(k, "f.txt"), "w").write("pwned") and None)
t("create", lambda: open(os.path.join(k, "new.txt"), "w").close())
t("delete", lambda: os.unlink(os.path.join(k, "f.txt")))
t("rename", lambda: os.rename(k, os.path.join(w, "moved")))
t("beside", lambda: open(os.path.join(w, "out.txt"), "w").write("fine") and None)
`

// TestReadOnlyInsideWriteGrant checks a read-only part of a write grant
// (a policy's deny_write inside a write grant): readable, unchangeable,
// with the rest of the grant writable; and that a run without the mount
// namespace, the one layer that can keep it, is refused rather than run
// with the part writable.
func TestReadOnlyInsideWriteGrant(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"ro.py": readOnlyScript})
	setup := func() (string, Sandbox) {
		base := grantTree(t)
		w := worldDir(t, filepath.Join(base, "out"))
		keep := worldDir(t, filepath.Join(w, "keep"))
		if err := os.WriteFile(filepath.Join(keep, "f.txt"), []byte("hello\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(keep, "f.txt"), 0o666)
		return w, Sandbox{WritePaths: []string{w}, ReadOnlyPaths: []string{keep}}
	}
	w, sb := setup()
	o := runIn(t, sb, dir, "ro.py", w)
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	for _, want := range []string{
		"read: ok hello\n", "overwrite: Read-only file system\n", "create: Read-only file system\n",
		"delete: Read-only file system\n", "rename: Device or resource busy\n", "beside: ok \n",
	} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("missing %q in:\n%s", want, o.stdout)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w, "keep", "f.txt")); string(b) != "hello\n" {
		t.Errorf("keep/f.txt on the host is %q", b)
	}
	real, _ := filepath.EvalSymlinks(filepath.Join(w, "keep"))
	if len(o.res.Grants.ReadOnly) != 1 || o.res.Grants.ReadOnly[0] != real {
		t.Errorf("Grants.ReadOnly %v, want [%s]", o.res.Grants.ReadOnly, real)
	}

	// Without ReadOnlyPaths the same script changes keep/: the test can
	// fail.
	w, sb = setup()
	sb.ReadOnlyPaths = nil
	if o := runIn(t, sb, dir, "ro.py", w); !strings.Contains(o.stdout, "overwrite: ok") {
		t.Errorf("without ReadOnlyPaths keep/ was not writable: %q", o.stdout)
	}

	// Landlock alone cannot keep it: refused, also when degraded.
	w, sb = setup()
	sb.Disable = []Layer{LayerMountNS}
	o = runIn(t, sb, dir, "ro.py", w)
	if !errors.Is(o.err, ErrIsolation) || o.res.Started {
		t.Errorf("without the mount namespace: err %v started %v, want ErrIsolation before the start", o.err, o.res.Started)
	}
	if b, _ := os.ReadFile(filepath.Join(w, "keep", "f.txt")); string(b) != "hello\n" {
		t.Errorf("keep/f.txt on the host is %q after the refused run", b)
	}
}

// moveParentScript renames the folder above a read-only part (.git above
// .git/hooks) and above a masked entry (.config above .config/gh) of the
// write grant argv[1], then creates both entries afresh at their paths.
const moveParentScript = `import os, sys
w = sys.argv[1]
def t(label, fn):
    try:
        fn()
        print(label + ": ok")
    except OSError as e:
        print(label + ": " + os.strerror(e.errno))
def plant(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "w").write(text)
t("move .git", lambda: os.rename(os.path.join(w, ".git"), os.path.join(w, "git-moved")))
t("plant hook", lambda: plant(os.path.join(w, ".git", "hooks", "pre-commit"), "#!/bin/sh\necho pwned\n"))
t("move .config", lambda: os.rename(os.path.join(w, ".config"), os.path.join(w, "config-moved")))
t("plant token", lambda: plant(os.path.join(w, ".config", "gh", "hosts.yml"), "oauth_token: attacker\n"))
t("rename inside .git", lambda: os.rename(os.path.join(w, ".git", "config"), os.path.join(w, ".git", "config.old")))
`

// TestReadOnlyParentPinned checks that the folders between a write grant
// and its read-only parts and masked entries cannot be renamed away: with
// them moved, the parts' mounts went along and the script created the
// entries afresh (a .git/hooks/pre-commit the host runs, a gh token file).
// The rest of the grant stays writable.
func TestReadOnlyParentPinned(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"move.py": moveParentScript})
	base := grantTree(t)
	w := worldDir(t, filepath.Join(base, "out"))
	worldDir(t, filepath.Join(w, ".git"))
	worldDir(t, filepath.Join(w, ".config"))
	hooks := worldDir(t, filepath.Join(w, ".git", "hooks"))
	gh := worldDir(t, filepath.Join(w, ".config", "gh"))
	for path, text := range map[string]string{
		filepath.Join(hooks, "pre-commit"): "#!/bin/sh\n", filepath.Join(gh, "hosts.yml"): "oauth_token: mine\n",
		filepath.Join(w, ".git", "config"): "[core]\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, 0o666)
	}
	// AutorunWritable: only .git/hooks read-only, not the whole .git
	// (TestPlantedForCallerTools).
	sb := Sandbox{WritePaths: []string{w}, ReadOnlyPaths: []string{hooks}, AllowDenied: []string{w}, DenyPaths: []string{gh}, AutorunWritable: []string{w}}
	o := runIn(t, sb, dir, "move.py", w)
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	for _, want := range []string{"move .git: Device or resource busy\n", "move .config: Device or resource busy\n", "rename inside .git: ok\n"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("missing %q in:\n%s", want, o.stdout)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(hooks, "pre-commit")); string(b) != "#!/bin/sh\n" {
		t.Errorf(".git/hooks/pre-commit on the host is %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(gh, "hosts.yml")); string(b) != "oauth_token: mine\n" {
		t.Errorf(".config/gh/hosts.yml on the host is %q", b)
	}
}

// TestDenyInsideExemptedWriteGrant checks that a deny entry inside a
// write grant exempted by its exact path (AllowDenied, as a policy's own
// write grants are) is hidden, not ignored.
func TestDenyInsideExemptedWriteGrant(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"read.py": readArgScript})
	base := grantTree(t)
	w := worldDir(t, filepath.Join(base, "out"))
	secret := filepath.Join(w, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOPSECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := Sandbox{WritePaths: []string{w}, AllowDenied: []string{w}, DenyPaths: []string{secret}}
	o := runIn(t, sb, dir, "read.py", secret)
	if o.err != nil || strings.Contains(o.stdout, "TOPSECRET") {
		t.Errorf("err %v stdout %q: the denied file inside the write grant was readable", o.err, o.stdout)
	}
	sb.DenyPaths = nil
	if o := runIn(t, sb, dir, "read.py", secret); !strings.Contains(o.stdout, "TOPSECRET") {
		t.Errorf("without the deny entry the file was not readable: %q", o.stdout)
	}
}

// TestPlanReadOnly checks what planGrants makes of ReadOnlyPaths.
func TestPlanReadOnly(t *testing.T) {
	base := grantTree(t)
	w := worldDir(t, filepath.Join(base, "out"))
	keep := worldDir(t, filepath.Join(w, "keep"))
	real := func(p string) string { r, _ := filepath.EvalSymlinks(p); return r }
	cases := []struct {
		name     string
		readOnly []string
		want     []string // Grants.ReadOnly
		err      string
	}{
		{"inside a write grant", []string{keep}, []string{real(keep)}, ""},
		{"outside every write grant changes nothing", []string{filepath.Join(base, "data")}, nil, ""},
		{"missing: the script could create it", []string{filepath.Join(w, "missing")}, nil, "must exist"},
		{"the write grant itself", []string{w}, nil, "is a write grant itself"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb := Sandbox{WritePaths: []string{w}, ReadOnlyPaths: c.readOnly}
			gp, err := sb.planGrantsNominal("", false)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(gp.Grants.ReadOnly, ",") != strings.Join(c.want, ",") {
				t.Errorf("ReadOnly %v, want %v", gp.Grants.ReadOnly, c.want)
			}
			if (gp.MountOnly != "") != (len(c.want) > 0) {
				t.Errorf("mountOnly %v with ReadOnly %v", gp.MountOnly, gp.Grants.ReadOnly)
			}
		})
	}
}

// TestMissingDenyInsideExemptedWriteGrant checks that an exempted write
// grant holding a deny entry that does not exist is refused: a mask needs
// something to cover, and the script could create the entry.
func TestMissingDenyInsideExemptedWriteGrant(t *testing.T) {
	base := grantTree(t)
	w := worldDir(t, filepath.Join(base, "out"))
	missing := filepath.Join(w, ".ssh")
	sb := Sandbox{WritePaths: []string{w}, AllowDenied: []string{w}, DenyPaths: []string{missing}}
	if _, err := sb.planGrantsNominal("", false); err == nil || !strings.Contains(err.Error(), "cannot be hidden while it does not exist") {
		t.Fatalf("err %v, want a refusal naming %s", err, missing)
	}
	if err := os.Mkdir(missing, 0o700); err != nil {
		t.Fatal(err)
	}
	gp, err := sb.planGrantsNominal("", false)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(missing)
	if !slices.Contains(gp.Grants.Masked, real) || gp.MountOnly == "" {
		t.Errorf("existing entry: masked %v mountOnly %v", gp.Grants.Masked, gp.MountOnly)
	}
}
