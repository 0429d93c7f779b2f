package stage

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLandlockCause checks that a missing Landlock says how to get it.
func TestLandlockCause(t *testing.T) {
	for errno, want := range map[syscall.Errno]string{
		unix.ENOSYS:     "CONFIG_SECURITY_LANDLOCK",
		unix.EOPNOTSUPP: "lsm=",
		unix.EFAULT:     "EFAULT",
	} {
		if got := landlockCause(errno); !strings.Contains(got, want) {
			t.Errorf("%v: %q does not say %q", errno, got, want)
		}
	}
}

// TestOpenRuleTargetInRoot checks that a pooled stage's rules on its
// prebuilt root (prebuildRules) resolve symlinks in that root, as they
// will once it is the run's root: an absolute link to a host file the root
// does not hold is missing (and skipped), not the host's file, and one to
// a file the root holds is that file.
func TestOpenRuleTargetInRoot(t *testing.T) {
	host := t.TempDir() + "/secret"
	if err := os.WriteFile(host, []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, d := range []string{"/etc", "/usr/share"} {
		if err := os.MkdirAll(root+d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(root+"/usr/share/zone", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"/etc/out": host, "/etc/in": "/usr/share/zone", "/etc/up": "../../../../.." + host} {
		if err := os.Symlink(target, root+link); err != nil {
			t.Fatal(err)
		}
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(rootFD)
	for _, tc := range []struct {
		path string
		want string // the file opened, under root; "" for ENOENT
	}{
		{"/etc/out", ""},
		{"/etc/up", ""},
		{"/etc/in", root + "/usr/share/zone"},
		{"/usr/share/zone", root + "/usr/share/zone"},
	} {
		fd, err := openRuleTarget(rootFD, tc.path)
		if errors.Is(err, unix.ENOSYS) {
			t.Skip("openat2 is missing (before Linux 5.6): prebuildRules makes no rules then")
		}
		if tc.want == "" {
			if !errors.Is(err, unix.ENOENT) {
				unix.Close(fd)
				t.Errorf("%s: opened (err %v), want ENOENT: the rule would be on the host's %s", tc.path, err, host)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		var got, want unix.Stat_t
		if err := unix.Fstat(fd, &got); err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		if err := unix.Stat(tc.want, &want); err != nil {
			t.Fatal(err)
		}
		if got.Dev != want.Dev || got.Ino != want.Ino {
			t.Errorf("%s: opened another file than %s", tc.path, tc.want)
		}
	}
}
