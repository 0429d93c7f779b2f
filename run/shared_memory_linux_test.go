package run

import (
	"strings"
	"testing"
)

// TestSharedAnonymousMemoryStopped: memory mapped MAP_SHARED|MAP_ANONYMOUS
// (Python's mmap.mmap(-1, n)) is shmem: statm counts it as shared and
// smaps_rollup as Pss_Shmem, not Pss_Anon. Without a cgroup the watch
// must still stop a run that holds far more than its limit that way;
// RLIMIT_AS, relaxed to the limit plus 16 GiB, does not. The script
// holds the memory for a while: the watch polls.
func TestSharedAnonymousMemoryStopped(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"shm.py": `import mmap, time
n = 1536 << 20
m = mmap.mmap(-1, n)
for off in range(0, n, 1 << 20):
    m[off:off + (1 << 20)] = b"x" * (1 << 20)
time.sleep(10)
print("allocated")
`})
	for _, without := range [][]Layer{nil, {LayerCgroup}} {
		t.Run("1.5 GiB shared under 512 MiB"+layerSuffix(without), func(t *testing.T) {
			o := runIn(t, Sandbox{Disable: without}, dir, "shm.py")
			if o.err != nil || strings.Contains(o.stdout, "allocated") || o.res.ExitCode == 0 {
				t.Errorf("not stopped: err %v exit %d stdout %q", o.err, o.res.ExitCode, o.stdout)
			}
			if o.res.OOMKills == 0 && o.res.LimitExceeded != LimitMemory {
				t.Errorf("stopped, but not by the cgroup or the watch: exit %d signal %q stderr %q", o.res.ExitCode, o.res.Signal, lastLine(o.stderr))
			}
		})
	}
}
