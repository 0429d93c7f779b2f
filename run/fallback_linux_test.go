package run

import (
	"os"
	"strings"
	"syscall"
	"testing"
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
const fallbackTests = "^(TestFallbackWithoutUserNamespaces|TestEnvironmentAllowlist|TestNothingOutlivesTheRun|TestResourceLimits|TestExitStatus)$"

// TestFallbackWithoutUserNamespaces checks the real fallback, not the
// Disable switch: the suite re-runs part of itself inside a user namespace
// (mapping the host's uids 0-65535 onto themselves) whose
// max_user_namespaces is 0, so clone(CLONE_NEWUSER) fails as on a kernel
// or container that forbids it. Runs must still work, report every
// namespace missing with the kernel's reason, and apply the other layers.
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
	o := runIn(t, Sandbox{}, dir, "ok.py")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	if !strings.Contains(o.stdout, "uid 65534") {
		t.Errorf("the script did not run as nobody: %q", o.stdout)
	}
	missing := map[Layer]string{}
	for _, m := range o.res.Missing {
		missing[m.Layer] = m.Reason
	}
	for _, l := range namespaceLayers(false) {
		if !strings.Contains(missing[l], "user namespaces unavailable") {
			t.Errorf("%s: reason %q, want the clone failure", l, missing[l])
		}
	}
	for _, l := range []Layer{LayerRlimits, LayerCaps, LayerNoNewPrivs, LayerSeccomp} {
		if !has(o.res.Applied, l) {
			t.Errorf("%s not applied in the fallback (missing: %q)", l, missing[l])
		}
	}
	o = runIn(t, Sandbox{RequireIsolation: true}, dir, "ok.py")
	if o.res.Started || o.err == nil {
		t.Errorf("RequireIsolation ran the script without namespaces (err %v)", o.err)
	}
}
