package run

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/workdir"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// The disk attacks write into the work folder ($TMPDIR), then hold what
// they wrote for two seconds before saying so: the watch must see it while
// the script still runs, whatever the machine's load (the kill comes within
// a few of its 10 ms walks).
const (
	// fillManyFiles writes 8 files of 16 MiB, 128 MiB in all, each under
	// RLIMIT_FSIZE.
	fillManyFiles = `import os, time
d = os.environ["TMPDIR"]
buf = b"\x55" * (1 << 20)
for i in range(8):
    with open(os.path.join(d, "part%d" % i), "wb") as f:
        for _ in range(16):
            f.write(buf)
time.sleep(2)
print("all written 128 MiB")
`
	// fillInodes creates 3000 empty files: no bytes, only inodes.
	fillInodes = `import os, time
d = os.environ["TMPDIR"]
for i in range(3000):
    open(os.path.join(d, "f%d" % i), "w").close()
time.sleep(2)
print("all created 3000")
`
	// fillDeleted writes 64 MiB into a file whose name is gone, so no
	// walk of the folder finds it.
	fillDeleted = `import os, time
d = os.environ["TMPDIR"]
p = os.path.join(d, "hidden")
f = open(p, "wb")
os.unlink(p)
buf = b"\x66" * (1 << 20)
for _ in range(64):
    f.write(buf)
f.flush()
time.sleep(2)
print("all held 64 MiB")
`
)

// notDumpable makes the script's process (and what it forks after) not
// dumpable, as ssh-agent does: without a user namespace an unprivileged
// supervisor can then read neither its descriptors nor its smaps.
const notDumpable = "import ctypes\nctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"

// watchAttacks get through without the watch where the work folder is on
// the host disk (no user namespace, so no mount namespace and no tmpfs) or
// no cgroup caps the memory, and fail with it. The not-dumpable variants
// matter when the suite runs unprivileged (TestUnprivileged): root reads
// any process's /proc files.
func watchAttacks() []attack {
	small := Sandbox{WorkDirMB: 32}
	noUserNS := []Layer{LayerUserNS}
	return []attack{
		{layer: LayerWatch, name: "64 MiB in a deleted open file of a process that is not dumpable, work folder on the host disk capped at 32 MiB", also: noUserNS, sb: small, script: notDumpable + fillDeleted, setup: printed("all held")},
		{layer: LayerWatch, name: "400 MiB held by 4 processes that are not dumpable, under 256 MiB without a cgroup or user namespace", also: []Layer{LayerCgroup, LayerUserNS}, sb: Sandbox{MemoryMB: 256, WorkDirMB: 16}, script: notDumpable + heldAcrossProcesses, setup: printed("all held")},
		{layer: LayerWatch, name: "128 MiB in 8 files, work folder on the host disk capped at 32 MiB", also: noUserNS, sb: small, script: fillManyFiles, setup: printed("all written")},
		{layer: LayerWatch, name: "3000 empty files, work folder on the host disk capped at 16 MiB (1024 inodes)", also: noUserNS, sb: Sandbox{WorkDirMB: 16}, script: fillInodes, setup: printed("all created")},
		{layer: LayerWatch, name: "64 MiB in a deleted open file, work folder on the host disk capped at 32 MiB", also: noUserNS, sb: small, script: fillDeleted, setup: printed("all held")},
		{layer: LayerWatch, name: "128 MiB in 8 files, kept work folder capped at 32 MiB", sb: Sandbox{WorkDirMB: 32, KeepWorkDir: true}, script: fillManyFiles, setup: printed("all written")},
		{layer: LayerWatch, name: "400 MiB held by 4 processes under 256 MiB without a cgroup", also: []Layer{LayerCgroup}, sb: Sandbox{MemoryMB: 256, WorkDirMB: 16}, script: heldAcrossProcesses, setup: printed("all held")},
	}
}

// TestWatchAttacks shows the watch stopping each attack, and each attack
// getting through with the watch disabled (the ablation).
func TestWatchAttacks(t *testing.T) {
	needTool(t, "python3")
	for _, a := range watchAttacks() {
		t.Run(a.name, func(t *testing.T) {
			if a.sb.KeepWorkDir {
				// The kept folders are left for the caller: remove them.
				t.Cleanup(func() { removeKept(t) })
			}
			runAttack(t, a)
		})
	}
}

// removeKept removes the kept work folders of this test's runs.
func removeKept(t *testing.T) {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "skill-sandbox-run-*"))
	for _, m := range matches {
		if st, err := os.Stat(filepath.Join(m, "part0")); err == nil && st.Size() > 0 {
			workdir.RemoveAll(m)
		}
	}
}

// TestWatchRecord checks what a run stopped by the watch reports: the cap,
// the kill, and the layer among the applied ones; and that a run within
// the caps is left alone.
func TestWatchRecord(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{
		"fill.py": fillManyFiles,
		"ok.py":   "import os\nopen(os.path.join(os.environ['TMPDIR'], 'x'), 'wb').write(b'y' * (4 << 20))\nprint('ok')\n",
	})
	sb := Sandbox{WorkDirMB: 32, Disable: []Layer{LayerUserNS}}
	o := runIn(t, sb, dir, "fill.py")
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.res.LimitExceeded != LimitWorkDirBytes || o.res.Signal != "SIGKILL" {
		t.Errorf("LimitExceeded %q signal %q, want %q and SIGKILL", o.res.LimitExceeded, o.res.Signal, LimitWorkDirBytes)
	}
	if !stageconfig.Has(o.res.Applied, LayerWatch) {
		t.Errorf("watch not among the applied layers %v", o.res.Applied)
	}
	o = runIn(t, sb, dir, "ok.py")
	if o.err != nil || o.res.ExitCode != 0 || o.res.LimitExceeded != "" {
		t.Errorf("a run within the caps: err %v exit %d LimitExceeded %q", o.err, o.res.ExitCode, o.res.LimitExceeded)
	}
}

// swapFolders keeps exchanging 32 folders with symlinks to a FIFO
// (renameat2 RENAME_EXCHANGE) for three seconds, then writes 96 MiB: a
// walk by paths that lstat a folder and opened the FIFO a moment later
// blocked, and no cap held after that.
const swapFolders = `import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
d = os.environ["TMPDIR"]
os.chdir(d)
os.mkfifo("fifo")
for i in range(32):
    os.mkdir("d%d" % i)
    os.symlink("fifo", "l%d" % i)
kids = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        while True:
            for i in range(32):
                libc.renameat2(-100, b"d%d" % i, -100, b"l%d" % i, 2)
    kids.append(pid)
time.sleep(3)
for pid in kids:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
buf = b"\x77" * (1 << 20)
for i in range(6):
    with open("part%d" % i, "wb") as f:
        for _ in range(16):
            f.write(buf)
time.sleep(2)
print("all written 96 MiB")
`

// TestWatchSwappedFolder checks that folders swapped with symlinks to a
// FIFO while the watch walks the kept work folder neither block the watch
// nor lead it out of the folder: the cap still stops the run.
func TestWatchSwappedFolder(t *testing.T) {
	needTool(t, "python3")
	t.Cleanup(func() { removeKept(t) })
	dir := newSkill(t, map[string]string{"swap.py": swapFolders})
	o := runIn(t, Sandbox{WorkDirMB: 32, KeepWorkDir: true, Timeout: 30 * time.Second}, dir, "swap.py")
	if o.err != nil {
		t.Fatal(o.err)
	}
	if strings.Contains(o.stdout, "all written") || o.res.LimitExceeded != LimitWorkDirBytes {
		t.Errorf("LimitExceeded %q, stdout %q: the watch did not stop 96 MiB in a 32 MiB work folder", o.res.LimitExceeded, o.stdout)
	}
}
