package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDenyThroughAnotherMount: the home folder is also mounted elsewhere
// (a bind mount here; a btrfs top level or a backup mount on real hosts).
// A grant of that other path must not hand out ~/.ssh under another name:
// a read grant of it has .ssh masked, a grant of its .ssh and a write
// grant of it are refused.
func TestDenyThroughAnotherMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to bind-mount a folder on the host")
	}
	needTool(t, "sh")
	base := t.TempDir()
	os.Chmod(base, 0o755)
	home, alias := filepath.Join(base, "home"), filepath.Join(base, "alias")
	for _, d := range []string{filepath.Join(home, ".ssh"), alias} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(home, 0o777) // writable by the sandbox identity: refused for the deny entry only
	os.WriteFile(filepath.Join(home, ".ssh", "id"), []byte("private-key\n"), 0o644)
	os.WriteFile(filepath.Join(home, "notes"), []byte("notes\n"), 0o644)
	if err := unix.Mount(home, alias, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(alias, unix.MNT_DETACH) })
	t.Setenv("HOME", home)
	dir := newSkill(t, map[string]string{"cat.sh": "#!/bin/sh\ncat \"$@\"\nexit 0\n"})

	o := runIn(t, Sandbox{ReadPaths: []string{alias}}, dir, "cat.sh", filepath.Join(alias, "notes"), filepath.Join(alias, ".ssh", "id"))
	if o.err != nil {
		t.Fatalf("read grant of the other mount: %v (stderr %s)", o.err, o.stderr)
	}
	if strings.Contains(o.stdout, "private-key") || !strings.Contains(o.stdout, "notes") {
		t.Errorf("read grant of the other mount: stdout %q", o.stdout)
	}
	// Both mounts granted: the same .ssh is masked under both names (the
	// masks' check against swapped names must tell the two apart).
	o = runIn(t, Sandbox{ReadPaths: []string{home, alias}}, dir, "cat.sh", filepath.Join(home, ".ssh", "id"), filepath.Join(alias, ".ssh", "id"), filepath.Join(alias, "notes"))
	if o.err != nil {
		t.Fatalf("read grants of both mounts: %v (stderr %s)", o.err, o.stderr)
	}
	if strings.Contains(o.stdout, "private-key") || !strings.Contains(o.stdout, "notes") {
		t.Errorf("read grants of both mounts: stdout %q", o.stdout)
	}
	for _, sb := range []Sandbox{
		{ReadPaths: []string{filepath.Join(alias, ".ssh")}},
		{WritePaths: []string{alias}},
	} {
		o := runIn(t, sb, dir, "cat.sh", filepath.Join(alias, ".ssh", "id"))
		if !errors.Is(o.err, ErrBadConfig) || !strings.Contains(o.err.Error(), "another mount") || strings.Contains(o.stdout, "private-key") {
			t.Errorf("read %v write %v: err %v stdout %q", sb.ReadPaths, sb.WritePaths, o.err, o.stdout)
		}
	}
}
