package posix

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUserNSCause checks that each way a host refuses user namespaces is
// named, with its fix, instead of the kernel's errno text.
func TestUserNSCause(t *testing.T) {
	allowing := hostFacts{maxUserNS: "15000", unprivClone: "1", apparmorRestrict: "0"}
	with := func(edit func(*hostFacts)) hostFacts {
		f := allowing
		edit(&f)
		return f
	}
	clone := func(e syscall.Errno) error { return &os.PathError{Op: "fork/exec", Path: "/proc/self/exe", Err: e} }
	cases := []struct {
		name  string
		err   error
		facts hostFacts
		want  []string
	}{
		{"sysctl max 0", clone(unix.ENOSPC), with(func(f *hostFacts) { f.maxUserNS = "0"; f.root = true }),
			[]string{"user.max_user_namespaces = 0", "ENOSPC", "sysctl -w user.max_user_namespaces="}},
		{"limit used up", clone(unix.ENOSPC), allowing,
			[]string{"user.max_user_namespaces = 15000 is used up"}},
		{"nesting", clone(unix.EUSERS), allowing, []string{"32 user namespaces deep"}},
		{"debian sysctl", clone(unix.EPERM), with(func(f *hostFacts) { f.unprivClone = "0" }),
			[]string{"kernel.unprivileged_userns_clone = 0", "sysctl -w kernel.unprivileged_userns_clone=1"}},
		{"debian sysctl is no cause for root", clone(unix.EPERM), with(func(f *hostFacts) { f.unprivClone = "0"; f.root = true }),
			[]string{"no sysctl forbids it"}},
		{"apparmor", clone(unix.EACCES), with(func(f *hostFacts) { f.apparmorRestrict = "1" }),
			[]string{"kernel.apparmor_restrict_unprivileged_userns = 1", "packaging/apparmor"}},
		{"container seccomp", clone(unix.EPERM), with(func(f *hostFacts) { f.seccompFilter = true }),
			[]string{"seccomp filter", "container", "--security-opt seccomp="}},
		{"old kernel", clone(unix.EINVAL), allowing, []string{"CONFIG_USER_NS", "EINVAL"}},
		{"no syscall", clone(unix.ENOSYS), allowing, []string{"CONFIG_USER_NS", "ENOSYS"}},
		{"unknown", clone(unix.EPERM), allowing, []string{"EPERM", "no sysctl forbids it"}},
		{"not an errno", errors.New("odd"), allowing, []string{"odd"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := UserNSCause(c.err, c.facts)
			if !strings.HasPrefix(got, "user namespaces unavailable: ") {
				t.Errorf("%q lacks the prefix", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q does not say %q", got, w)
				}
			}
		})
	}
}

// TestReadHostFacts reads the sysctls from a fake /proc.
func TestReadHostFacts(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"sys/user/max_user_namespaces":                     "0\n",
		"sys/kernel/apparmor_restrict_unprivileged_userns": "1\n",
		"self/status": "Name:\tx\nSeccomp:\t2\nSeccomp_filters:\t1\n",
	}
	for rel, body := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := ReadHostFacts(root)
	want := hostFacts{root: os.Geteuid() == 0, maxUserNS: "0", apparmorRestrict: "1", seccompFilter: true}
	if f != want {
		t.Errorf("got %+v, want %+v", f, want)
	}
}
