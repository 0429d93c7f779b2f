package run

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// mountIn mounts a tmpfs at dir (made first), or, with from set, binds
// from there; the mount is undone at the end of the test. It skips the
// test where the caller cannot mount in its mount namespace: an
// unprivileged caller can mount only in a user namespace of its own, which
// the sandbox, started from the caller's namespace, never sees.
func mountIn(t *testing.T, dir, from string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if from == "" {
		err = unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m")
	} else {
		err = unix.Mount(from, dir, "", unix.MS_BIND, "")
	}
	if err != nil {
		t.Skipf("mount at %s: %v (mounting in the caller's namespace needs root)", dir, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
}

// TestGrantHoldingMountPoints: a granted folder that holds other mounts
// (a bind mount of a root-only folder from elsewhere, a tmpfs) is
// refused, naming each, unless each is granted on its own or is a deny
// entry (masked): the grant's bind mount is recursive, so the mounts
// would come along unchecked, id-mapped for a root caller (a bind of
// /etc/ssl/private into a granted 0700 project folder was readable). A
// mount point granted on its own is checked as a grant (deny entries
// inside it masked), and a denied one stays hidden.
func TestGrantHoldingMountPoints(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"read.py": readProbe})
	base, err := os.MkdirTemp("", "skill-sandbox-submount-") // 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	// A root-only folder outside the grant (as /etc/ssl/private).
	private := filepath.Join(base, "private")
	if err := os.MkdirAll(private, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(private, "key.pem")
	if err := os.WriteFile(key, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The granted project: the caller's own, 0700 (handed over id-mapped
	// to a root caller's sandbox).
	g := filepath.Join(base, "proj")
	if err := os.MkdirAll(g, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(g, "own.txt"), []byte("x"), 0o600)
	keys := filepath.Join(g, "keys")
	mountIn(t, keys, private)
	sub := filepath.Join(g, "sub")
	mountIn(t, sub, "")
	for f, mode := range map[string]os.FileMode{"token": 0o600, "data.txt": 0o644} {
		if err := os.WriteFile(filepath.Join(sub, f), []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
	}
	inKeys := filepath.Join(keys, "key.pem")
	args := []string{filepath.Join(g, "own.txt"), inKeys, filepath.Join(sub, "token"), filepath.Join(sub, "data.txt")}

	refused := []struct {
		name string
		sb   Sandbox
		want []string // in the error
	}{
		{"read", Sandbox{ReadPaths: []string{g}}, []string{keys, sub}},
		{"write", Sandbox{WritePaths: []string{g}}, []string{keys, sub}},
		{"one named", Sandbox{ReadPaths: []string{g, sub}}, []string{keys}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			o := runIn(t, tt.sb, dir, "read.py", args...)
			if !errors.Is(o.err, ErrBadConfig) || strings.Contains(o.stdout, "ok") {
				t.Fatalf("a grant holding mount points ran: err %v\nstdout %s\nstderr %s", o.err, o.stdout, o.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(o.err.Error(), w) {
					t.Errorf("error does not name the mount point %s: %v", w, o.err)
				}
			}
			if _, err := (&Sandbox{SkillDir: dir, ReadPaths: tt.sb.ReadPaths, WritePaths: tt.sb.WritePaths}).CheckGrants(); !errors.Is(err, ErrBadConfig) {
				t.Errorf("CheckGrants: %v, want the same refusal", err)
			}
		})
	}

	// Each mount point granted on its own, or denied: the run goes ahead,
	// the deny entry inside the tmpfs and the denied bind stay hidden.
	t.Run("named or denied", func(t *testing.T) {
		sb := Sandbox{ReadPaths: []string{g, sub}, DenyPaths: []string{keys, filepath.Join(sub, "token")}}
		o := runIn(t, sb, dir, "read.py", args...)
		if o.err != nil || o.res.ExitCode != 0 {
			t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
		}
		for _, want := range []string{"denied key.pem", "denied token"} {
			if !strings.Contains(o.stdout, want+" ") {
				t.Errorf("want %q in\n%s", want, o.stdout)
			}
		}
		if !strings.Contains(o.stdout, "ok data.txt") {
			t.Errorf("the granted tmpfs's file: want ok data.txt in\n%s", o.stdout)
		}
	})
}

// writeProbe writes each path argument.
const writeProbe = `import sys
for p in sys.argv[1:]:
    open(p, "w").write("x")
`

// TestWriteGrantOfAMountPoint: a tmpfs inside a write grant, granted for
// writing on its own, is treated as every write grant: what the script
// writes there is in the record's artifacts, and an auto-run file it
// leaves there (.envrc) is renamed aside. Without the second grant the run
// is refused (TestGrantHoldingMountPoints).
func TestWriteGrantOfAMountPoint(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"write.py": writeProbe})
	base, err := os.MkdirTemp("", "skill-sandbox-submount-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	g := filepath.Join(base, "out")
	if err := os.MkdirAll(g, 0o700); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(g, "cache")
	mountIn(t, sub, "")
	os.Chmod(sub, 0o700)
	made, envrc := filepath.Join(sub, "made.txt"), filepath.Join(sub, ".envrc")
	o := runIn(t, Sandbox{WritePaths: []string{g, sub}}, dir, "write.py", made, envrc)
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	if !slices.ContainsFunc(o.res.Artifacts.Files, func(a Artifact) bool { return a.Path == made && a.Action == ArtifactCreated }) {
		t.Errorf("%s not among the artifacts %+v", made, o.res.Artifacts.Files)
	}
	if _, err := os.Lstat(envrc); err == nil {
		t.Errorf("%s is still there", envrc)
	}
	if !slices.ContainsFunc(o.res.Artifacts.Neutralised, func(n Neutralised) bool { return n.Path == envrc && n.Kind == "autorun" }) {
		t.Errorf("%s not in Neutralised %+v", envrc, o.res.Artifacts.Neutralised)
	}
}
