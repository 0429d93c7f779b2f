package run

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// unprivilegedTests are re-run as an unprivileged user by TestUnprivileged;
// one name per line, sorted, so that additions merge.
func unprivilegedTests() string {
	return "^(" + strings.Join([]string{
		"TestAllowLocalPorts",
		"TestArtifactsForgedInRun",
		"TestArtifactsForgery",
		"TestDenyInsideExemptedWriteGrant",
		"TestEditorFilesReadOnly",
		"TestEnvironmentAllowlist",
		"TestEtcRule",
		"TestExitStatus",
		"TestFolderGrantKeepsOthersBits",
		"TestGVisorExecLikeNative",
		"TestGVisorInterpreterExecLikeNative",
		"TestGVisorRealSkills",
		"TestGitDirShapePlanted",
		"TestGrantAttacks",
		"TestGrantHoldingMountPoints",
		"TestGrantTypedThroughSymlink",
		"TestGrantsWork",
		"TestIdleStageOutOfReach",
		"TestInheritedDescriptors",
		"TestInterpreterEnvironment",
		"TestLayerAttacks",
		"TestMachineSize",
		"TestMadeWriteFolderOwnedByCaller",
		"TestMatplotlibPlot",
		"TestModule",
		"TestNestedUserNamespace",
		"TestNoNewPrivsFlag",
		"TestNothingOutlivesTheRun",
		"TestOthersWriteRestricted",
		"TestOutputAttacks",
		"TestOutputTrapsNeutralised",
		"TestPlantedForCallerTools",
		"TestPublicCollectionPatterns",
		"TestQuotaAttacks",
		"TestReadOnlyInsideWriteGrant",
		"TestReservedAddressSpaceRuns",
		"TestResourceLimits",
		"TestRunWithTmpdirInSandboxTree",
		"TestSandboxRoot",
		"TestSharedAnonymousMemoryStopped",
		"TestSharedQuotasNamed",
		"TestUnusableGrantRefused",
		"TestWatchAttacks",
		"TestWriteGrantCap",
		"TestWriteGrantOfAMountPoint",
		"TestWriteGrantOwnedByCaller",
	}, "|") + ")$"
}

// TestUnprivileged runs part of this suite again as nobody when the suite
// runs as root, so both kinds of caller are exercised in one `go test`.
func TestUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("already unprivileged: the whole suite runs as this user")
	}
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	out, err := rerunSuite(unprivilegedTests(), nil,
		&syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID, Groups: []uint32{}}})
	t.Logf("suite as uid %d:\n%s", nobodyUID, out)
	if err != nil {
		t.Fatalf("the suite failed as an unprivileged user: %v", err)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("no test passed as an unprivileged user")
	}
}

// rerunSuite runs the tests matching pattern again in a copy of this test
// binary, with a minimal environment plus env and the process attributes
// attr (another identity, a user namespace, ...), and returns their
// combined output. The copy sits in a new folder every user can enter,
// since the build folder of `go test` is private.
func rerunSuite(pattern string, env []string, attr *syscall.SysProcAttr) (string, error) {
	dir, err := os.MkdirTemp("", "skill-sandbox-rerun-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "run.test")
	if err := copyFile(bin, "/proc/self/exe"); err != nil {
		return "", err
	}
	args := []string{"-test.run", pattern, "-test.count", "1"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + sandboxPath, "HOME=" + dir, "TMPDIR=/tmp", "LANG=C.UTF-8"}, env...)
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// copyFile copies src to dst, executable.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
