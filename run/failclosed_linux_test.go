package run

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

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
			got := userNSCause(c.err, c.facts)
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
	f := readHostFacts(root)
	want := hostFacts{root: os.Geteuid() == 0, maxUserNS: "0", apparmorRestrict: "1", seccompFilter: true}
	if f != want {
		t.Errorf("got %+v, want %+v", f, want)
	}
}

// TestRefusing checks which missing layers refuse a run.
func TestRefusing(t *testing.T) {
	all := append(namespaceLayers(false), processLayers(false)...)
	without := func(drop ...Layer) []Layer {
		var out []Layer
		for _, l := range all {
			if !stageconfig.Has(drop, l) {
				out = append(out, l)
			}
		}
		return out
	}
	miss := func(ls ...Layer) []Missing {
		var out []Missing
		for _, l := range ls {
			out = append(out, Missing{Layer: l, Reason: "gone"})
		}
		return out
	}
	cases := []struct {
		name    string
		p       plan
		applied []Layer
		missing []Missing
		want    []Layer
	}{
		{"complete", plan{}, all, nil, nil},
		{"no userns", plan{}, without(namespaceLayers(false)...), miss(namespaceLayers(false)...), namespaceLayers(false)},
		{"no userns, degraded", plan{degraded: true}, without(namespaceLayers(false)...), miss(namespaceLayers(false)...), nil},
		{"no landlock", plan{}, without(LayerLandlockFS, LayerLandlockNet, LayerLandlockScope),
			miss(LayerLandlockFS, LayerLandlockNet, LayerLandlockScope), []Layer{LayerLandlockFS}},
		{"old landlock, namespaces cover", plan{}, without(LayerLandlockNet, LayerLandlockScope),
			miss(LayerLandlockNet, LayerLandlockScope), nil},
		{"old landlock, strict", plan{strict: true}, without(LayerLandlockNet, LayerLandlockScope),
			miss(LayerLandlockNet, LayerLandlockScope), []Layer{LayerLandlockNet, LayerLandlockScope}},
		{"old landlock without netns", plan{}, without(LayerNetNS, LayerLandlockScope),
			miss(LayerNetNS, LayerLandlockScope), []Layer{LayerNetNS, LayerLandlockScope}},
		{"disabled by the caller", plan{disabled: []Layer{LayerSeccomp}}, without(LayerSeccomp), miss(LayerSeccomp), nil},
		{"disabled, strict", plan{strict: true, disabled: []Layer{LayerSeccomp}}, without(LayerSeccomp), miss(LayerSeccomp), []Layer{LayerSeccomp}},
		{"userns disabled", plan{disabled: []Layer{LayerUserNS}}, without(namespaceLayers(false)...), miss(namespaceLayers(false)...), nil},
		{"no_new_privs disabled: landlock and seccomp fail", plan{disabled: []Layer{LayerNoNewPrivs}},
			without(LayerNoNewPrivs, LayerLandlockFS, LayerSeccomp), miss(LayerNoNewPrivs, LayerLandlockFS, LayerSeccomp), nil},
		{"no seccomp", plan{}, without(LayerSeccomp), miss(LayerSeccomp), []Layer{LayerSeccomp}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []Layer
			for _, m := range refusing(&c.p, c.applied, c.missing) {
				got = append(got, m.Layer)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("refusing = %v, want %v", got, c.want)
			}
		})
	}
}

// TestIsolationError checks the one message of a refusal: layers grouped
// by cause, and the way to opt in.
func TestIsolationError(t *testing.T) {
	err := isolationError([]Missing{
		{Layer: LayerUserNS, Reason: "cause A"}, {Layer: LayerPIDNS, Reason: "cause A"}, {Layer: LayerLandlockFS, Reason: "cause B"},
	})
	want := "isolation unavailable: refusing to run without userns, pidns: cause A; without landlock-fs: cause B. To run anyway"
	if !errors.Is(err, ErrIsolation) || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "--allow-degraded") {
		t.Errorf("got %q, want it to start %q and name --allow-degraded", err, want)
	}
}

// TestIncompleteError checks the message of a run refused for layers
// built part-way: each layer with its step, and why --allow-degraded does
// not apply.
func TestIncompleteError(t *testing.T) {
	err := incompleteError([]Missing{
		{Layer: LayerMountNS, Reason: "mask /home/u/.ssh: permission denied (EACCES)"},
		{Layer: LayerLandlockFS, Reason: "landlock rule for /usr: permission denied (EACCES)"},
		{Layer: LayerLandlockNet, Reason: "landlock rule for /usr: permission denied (EACCES)"},
	})
	want := "isolation unavailable: refusing to run: mountns set up part-way: mask /home/u/.ssh: permission denied (EACCES); " +
		"landlock-fs, landlock-net set up part-way: landlock rule for /usr: permission denied (EACCES). "
	if !errors.Is(err, ErrIsolation) || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "--allow-degraded") {
		t.Errorf("got %q, want it to start %q and name --allow-degraded", err, want)
	}
}
