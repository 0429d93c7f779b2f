package scan

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUnreadableFile: a file the scan cannot open is high, whatever it
// is. Root reads a mode-000 file anyway, so as root the test runs itself
// again as uid 65534.
func TestUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		if testing.Short() {
			t.Skip("as root this test re-runs itself as uid 65534; skipped in -short mode")
		}
		// Not t.TempDir: its parent folder is private to root.
		dir, err := os.MkdirTemp("", "scan-rerun-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		os.Chmod(dir, 0o755)
		bin := filepath.Join(dir, "scan.test")
		data, err := os.ReadFile("/proc/self/exe")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-test.run", "^TestUnreadableFile$", "-test.count", "1", "-test.v")
		cmd.Dir, cmd.Env = dir, []string{"TMPDIR=/tmp", "HOME=/tmp"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestUnreadableFile") {
			t.Errorf("as uid 65534: %v\n%s", err, out)
		}
		return
	}
	dir := t.TempDir()
	writeSkillFile(t, dir, "notes.txt", "hidden", 0o000)
	res := mustScan(t, dir)
	if m, _ := res.Max(); m != High || !strings.Contains(formatFindings(res), "cannot be read, so not scanned") {
		t.Errorf("an unreadable file:\n%s", formatFindings(res))
	}
}
