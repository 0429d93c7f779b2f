package run

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestGVisorWriteGrantCap is TestWriteGrantCap under the gvisor backend:
// the watch reads the write grants on the host and the files runsc's
// processes hold unlinked there, and kills the run past --write-size,
// for a root caller (runsc's cgroup holds no disk) and a rootless one
// alike. Without the watch the script writes its 256 MiB and survives.
func TestGVisorWriteGrantCap(t *testing.T) {
	needRunsc(t)
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"fill.py": fillScript})
	for _, tc := range writeCapCases {
		t.Run(tc.name, func(t *testing.T) {
			out := gvisorWriteFolder(t)
			if tc.before > 0 {
				if err := os.WriteFile(filepath.Join(out, "old.bin"), make([]byte, tc.before<<20), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			o := runIn(t, Sandbox{Backend: BackendGVisor, WritePaths: []string{out}, WriteMB: 16, MaxFileMB: 512}, dir, "fill.py", out, strconv.Itoa(tc.write), tc.how)
			survived := strings.Contains(o.stdout, "survived")
			if st, err := os.Stat(filepath.Join(out, "fill.bin")); err == nil && tc.killed {
				t.Logf("written before the kill: %d MiB (cap 16)", st.Size()>>20)
			}
			if tc.killed && (survived || o.res.LimitExceeded != LimitWriteBytes || !slices.Contains(o.res.Applied, LayerWatch)) {
				t.Errorf("not stopped: survived %v limit %q layers %v err %v stderr %s", survived, o.res.LimitExceeded, o.res.Applied, o.err, o.stderr)
			}
			if !tc.killed && (!survived || o.res.LimitExceeded != "" || o.err != nil) {
				t.Errorf("stopped: limit %q err %v stderr %s", o.res.LimitExceeded, o.err, o.stderr)
			}
		})
	}
}

// gvisorWriteFolder is an empty folder a gVisor run may be granted for
// writing: the caller's, or for a root caller uid 65534's (a write
// folder of root's is refused, TestGVisorRootGrantsRefused).
func gvisorWriteFolder(t *testing.T) string {
	t.Helper()
	out := callerFolder(t)
	os.Chmod(filepath.Dir(out), 0o755)
	if os.Geteuid() == 0 {
		if err := os.Chown(out, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
