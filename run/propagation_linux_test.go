package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNoMountPropagatesToHost: a root caller hands the grants over as
// copies of the host's mounts (grants.HandOver). On most hosts "/" is a shared
// mount (systemd), and a copy of a shared mount joins its peer group, so
// every mount the init process then makes inside the grant (the mask of a
// denied entry, a read-only part of a write grant) would appear in the
// host's mount namespace too, and stay there after the run: the host's
// own ~/.ssh hidden behind an empty tmpfs. The grant here lies on a
// shared tmpfs of the test's; after the run the host must see no mount
// below it.
func TestNoMountPropagatesToHost(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only a root caller hands grants over, and the test mounts a shared tmpfs on the host")
	}
	needTool(t, "sh")
	base := sharedTmpfs(t)
	data := filepath.Join(base, "data")
	secret := filepath.Join(data, "secret")
	if err := os.MkdirAll(secret, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(secret, "key"), []byte("k"), 0o644)
	os.WriteFile(filepath.Join(data, "file"), []byte("visible\n"), 0o644)
	out := filepath.Join(base, "out")
	keep := filepath.Join(out, "keep")
	if err := os.MkdirAll(keep, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(out, 0o777)
	dir := newSkill(t, map[string]string{"cat.sh": "#!/bin/sh\ncat \"$1\"\n"})
	// The mask of secret, and the read-only copy over out/keep, are
	// mounts inside trees handed over from the shared tmpfs.
	sb := Sandbox{ReadPaths: []string{data}, WritePaths: []string{out}, ReadOnlyPaths: []string{keep}, DenyPaths: []string{secret}}
	o := runIn(t, sb, dir, "cat.sh", filepath.Join(data, "file"))
	if o.err != nil || o.res.ExitCode != 0 || o.stdout != "visible\n" {
		t.Fatalf("err %v exit %d stdout %q stderr %s", o.err, o.res.ExitCode, o.stdout, o.stderr)
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], base+"/") {
			t.Errorf("a mount of the sandbox reached the host: %s", line)
		}
	}
	if _, err := os.ReadFile(filepath.Join(secret, "key")); err != nil {
		t.Errorf("the host lost its own file: %v", err)
	}
}

// sharedTmpfs mounts a shared tmpfs on a folder of the test's (as systemd
// makes "/" shared), undone at the end of the test, and returns it.
func sharedTmpfs(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	if err := unix.Mount("tmpfs", base, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(base, unix.MNT_DETACH) })
	if err := unix.Mount("", base, "", unix.MS_SHARED, ""); err != nil {
		t.Skipf("cannot make a mount shared: %v", err)
	}
	return base
}
