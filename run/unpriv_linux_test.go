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

// unprivilegedTests are re-run as an unprivileged user by TestUnprivileged.
const unprivilegedTests = "^(TestLayerAttacks|TestNoNewPrivsFlag|TestEnvironmentAllowlist|TestExitStatus|TestNothingOutlivesTheRun|TestResourceLimits|TestInheritedDescriptors)$"

// TestUnprivileged runs part of this suite again as nobody when the suite
// runs as root, so both kinds of caller are exercised in one `go test`.
func TestUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("already unprivileged: the whole suite runs as this user")
	}
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	// The test binary sits in a private build folder; copy it where
	// nobody can execute it.
	dir, err := os.MkdirTemp("", "skill-sandbox-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "run.test")
	if err := copyFile(bin, "/proc/self/exe"); err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run", unprivilegedTests, "-test.count", "1"}
	if testing.Verbose() {
		args = append(args, "-test.v")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + sandboxPath, "HOME=" + dir, "TMPDIR=/tmp", "LANG=C.UTF-8"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	t.Logf("suite as uid %d:\n%s", nobodyUID, out)
	if err != nil {
		t.Fatalf("the suite failed as an unprivileged user: %v", err)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("no test passed as an unprivileged user")
	}
}

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
