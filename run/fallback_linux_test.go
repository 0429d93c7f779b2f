package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// noUserNSEnv asks the test binary to forbid user namespaces for itself
// (see TestFallbackWithoutUserNamespaces).
const noUserNSEnv = "SKILL_SANDBOX_TEST_NO_USERNS"

// forbidUserNamespacesIfAsked sets user.max_user_namespaces to 0 in the
// test binary's own user namespace when noUserNSEnv is set, so that the
// sandbox meets a kernel that refuses user namespaces.
func forbidUserNamespacesIfAsked() error {
	if os.Getenv(noUserNSEnv) != "1" {
		return nil
	}
	return os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0\n"), 0)
}

// fallbackTests run again where user namespaces are refused.
const fallbackTests = "^(TestFallbackWithoutUserNamespaces|TestGrantAttacks|TestGrantTypedThroughSymlink|TestEnvironmentAllowlist|TestNothingOutlivesTheRun|TestResourceLimits|TestExitStatus)$"

// TestFallbackWithoutUserNamespaces checks the real fallback, not the
// Disable switch: the suite re-runs part of itself inside a user namespace
// (mapping the host's uids 0-65535 onto themselves) whose
// max_user_namespaces is 0, so clone(CLONE_NEWUSER) fails as on a kernel
// or container that forbids it. By default a run must be refused with the
// real cause (the sysctl, not the kernel's "no space left on device");
// with AllowDegraded it must work, report every namespace missing and
// apply the other layers. The other re-run tests opt in (see runIn).
func TestFallbackWithoutUserNamespaces(t *testing.T) {
	if os.Getenv(noUserNSEnv) == "1" {
		checkFallbackRun(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("mapping a uid range for the nested test needs root")
	}
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	out, err := rerunSuite(fallbackTests, []string{noUserNSEnv + "=1"}, &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}},
		GidMappingsEnableSetgroups: true,
	})
	t.Logf("suite without user namespaces:\n%s", out)
	if err != nil {
		t.Fatalf("the suite failed where user namespaces are refused: %v", err)
	}
}

// checkFallbackRun is the nested part of TestFallbackWithoutUserNamespaces.
func checkFallbackRun(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"ok.py": "import os\nprint('uid', os.getuid())\n"})

	// The default fails closed, with one error naming the layers, the
	// cause and the way out.
	var out, warn bytes.Buffer
	sb := Sandbox{SkillDir: dir, Stdout: &out, Warnings: &warn}
	res, err := sb.Run(context.Background(), "ok.py", nil)
	if !errors.Is(err, ErrIsolation) || res.Started || out.Len() > 0 || res.Signal != "" {
		t.Fatalf("the default ran without user namespaces: err %v started %v signal %q stdout %q", err, res.Started, res.Signal, out.String())
	}
	msg := err.Error()
	t.Logf("refusal: %s", msg)
	for _, want := range []string{"userns, pidns, mountns, ipcns, utsns, netns", "user.max_user_namespaces = 0", "sysctl -w user.max_user_namespaces", "--allow-degraded"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
	if strings.HasPrefix(strings.TrimPrefix(msg, ErrIsolation.Error()+": "), "no space") {
		t.Errorf("refusal leads with the kernel's misleading words: %q", msg)
	}
	if warn.Len() > 0 {
		t.Errorf("a refused run printed warnings besides its error: %q", warn.String())
	}
	// The quotas are set in the user namespace: they go with it.
	withNS := append(backend.NamespaceLayers(false), LayerQuotas)
	if len(res.Missing) != len(withNS) {
		t.Errorf("Missing = %+v, want exactly the namespaces and the quotas", res.Missing)
	}

	o := runIn(t, Sandbox{AllowDegraded: true, Warnings: &warn}, dir, "ok.py")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	if !strings.Contains(o.stdout, "uid 65534") {
		t.Errorf("the script did not run as nobody: %q", o.stdout)
	}
	if n := strings.Count(warn.String(), "\n"); n != 1 || !strings.Contains(warn.String(), "running without userns, pidns") {
		t.Errorf("want one warning line for the one cause, got %q", warn.String())
	}
	missing := map[Layer]string{}
	for _, m := range o.res.Missing {
		missing[m.Layer] = m.Reason
	}
	for _, l := range withNS {
		if !strings.Contains(missing[l], "user namespaces unavailable: disabled by the sysctl user.max_user_namespaces = 0") {
			t.Errorf("%s: reason %q, want the sysctl named", l, missing[l])
		}
	}
	for _, l := range []Layer{LayerRlimits, LayerCaps, LayerNoNewPrivs, LayerSeccomp} {
		if !stageconfig.Has(o.res.Applied, l) {
			t.Errorf("%s not applied in the fallback (missing: %q)", l, missing[l])
		}
	}
	o = runIn(t, Sandbox{RequireIsolation: true}, dir, "ok.py")
	if o.res.Started || o.err == nil {
		t.Errorf("RequireIsolation ran the script without namespaces (err %v)", o.err)
	}
}

// degradedRerun reports whether this is the nested run without user
// namespaces, where the re-run tests opt into degraded runs.
func degradedRerun() bool { return os.Getenv(noUserNSEnv) == "1" }

// hasMissing reports whether ms holds layer l.
func hasMissing(ms []Missing, l Layer) bool {
	return slices.ContainsFunc(ms, func(m Missing) bool { return m.Layer == l })
}
