package run

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
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

// TestGVisorWorkFolderCap holds a gVisor run's work folder to
// --workdir-size and its entries to 64 per MiB (the native tmpfs's caps),
// root and rootless: the folder is the host's and the watch kills the
// run past either cap (workdir_bytes, workdir_inodes). /tmp is a tmpfs
// of the same size, which gVisor's kernel keeps: writing past it fails
// with ENOSPC. Without the fix the work folder was a tmpfs of no size
// (1 GiB written rootless, probe 24) whose entries nothing counted.
func TestGVisorWorkFolderCap(t *testing.T) {
	needRunsc(t)
	skill := gvisorSkill(t, `case "$1" in
bytes) dd if=/dev/zero of="$TMPDIR/big" bs=1M count=256 oflag=dsync 2>/dev/null ;;
inodes) i=0; while [ $i -lt 3000 ]; do : > "$TMPDIR/f$i" || exit 3; i=$((i+1)); done ;;
tmp) dd if=/dev/zero of=/tmp/big bs=1M count=64 2>&1 | grep -q 'No space left' && echo ENOSPC ;;
esac
echo survived
`)
	for _, tc := range []struct {
		arg, limit string
		stdout     string // besides "survived", for a run not killed
	}{
		{"bytes", LimitWorkDirBytes, ""},
		{"inodes", LimitWorkDirInodes, ""},
		{"tmp", "", "ENOSPC"},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			o := runIn(t, Sandbox{Backend: BackendGVisor, WorkDirMB: 16, MaxFileMB: 512}, skill, "scripts/k.sh", tc.arg)
			survived := strings.Contains(o.stdout, "survived")
			if o.res.LimitExceeded != tc.limit || survived != (tc.limit == "") || !strings.Contains(o.stdout, tc.stdout) {
				t.Errorf("limit %q (want %q), stdout %q, err %v, stderr %s", o.res.LimitExceeded, tc.limit, o.stdout, o.err, o.stderr)
			}
			if !slices.Contains(o.res.Applied, LayerWatch) {
				t.Errorf("layers %v lack watch", o.res.Applied)
			}
		})
	}
}

// TestGVisorUsage checks a gVisor run's CPU time and peak memory: a
// script holding 300 MiB and burning 1 s of CPU shows about that, as
// root, from the cgroup the supervisor keeps around runsc's (runsc's own
// resource usage covers runsc alone: 33 MB, 0.1 s). Rootless runsc has
// no cgroup, and the figures are 0, unknown, rather than runsc's.
func TestGVisorUsage(t *testing.T) {
	needRunsc(t)
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"hog.py": `import time
b = bytearray(300 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
t = time.process_time()
while time.process_time() - t < 1.0:
    pass
print("done")
`})
	o := runIn(t, Sandbox{Backend: BackendGVisor, Timeout: 60 * time.Second}, dir, "hog.py")
	if o.err != nil || !strings.Contains(o.stdout, "done") {
		t.Fatalf("err %v, stdout %q, stderr %s", o.err, o.stdout, o.stderr)
	}
	cpu, peak := o.res.CPUTime, o.res.PeakMemoryKB>>10
	t.Logf("cpu %v, peak memory %d MiB", cpu, peak)
	if os.Geteuid() != 0 {
		if cpu != 0 || peak != 0 {
			t.Errorf("rootless: cpu %v, peak %d MiB; want 0, unknown", cpu, peak)
		}
		return
	}
	// The host's figures for the sandbox: gVisor's own work for the
	// script counts (its page faults cost more there), not only the
	// script's; native 1.3 s and 304 MiB here.
	if cpu < 900*time.Millisecond || cpu > 10*time.Second || peak < 290 || peak > 600 {
		t.Errorf("cpu %v, peak %d MiB; want about 1 s and 300 MiB", cpu, peak)
	}
}
