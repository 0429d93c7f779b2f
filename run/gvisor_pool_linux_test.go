package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pooledGVisorLeft lists the processes of pre-started gVisor sandboxes
// whose folders are in tmp, the test's TMPDIR (gvisorTMPDIR): the tests
// of other packages (serve, cmd) run pools of their own at the same time.
func pooledGVisorLeft(tmp string) []string {
	var left []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte("ss-pool-")) && bytes.Contains(b, []byte(tmp+"/")) {
			left = append(left, e.Name()+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return left
}

// gvisorTMPDIR sets TMPDIR to a folder of the test's own (sticky, as
// /tmp), which then names its pool's sandboxes' folders and runsc
// processes, and returns it.
func gvisorTMPDIR(t testing.TB) string {
	t.Helper()
	tmp, err := os.MkdirTemp("", "run-gvisor-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	return tmp
}

// waitStarted waits until pl has started n gVisor sandboxes.
func waitStarted(t testing.TB, pl *Pool, n int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for pl.GVisorStats().Started < n {
		if time.Now().After(deadline) {
			t.Fatalf("the pool started no sandbox: %+v", pl.GVisorStats())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gvisorWorkspace is a folder beside skill that runs may write, as the
// MCP server's workspace: its runs share the sandbox identity.
func gvisorWorkspace(t testing.TB, skill string) string {
	t.Helper()
	work := filepath.Join(filepath.Dir(skill), "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		os.Chown(work, nobodyUID, nobodyUID)
	}
	return work
}

// TestGVisorPoolTakes: a shape seen once is not started; two gvisor
// runs in a row of one shape teach the pool the shape and start their
// own sandboxes; the next runs of that shape each take a pre-started
// one (one run each), with their own arguments, stdin, output, status
// and the watch; nothing one left in /tmp reaches the next; a run of
// another shape does not take one; Close leaves no runsc process.
func TestGVisorPoolTakes(t *testing.T) {
	needRunsc(t)
	tmp := gvisorTMPDIR(t)
	// The home passwd gives the script is its run's work folder, as
	// unpooled (the pool rewrites the sandbox's passwd for each run).
	// (Rootless, the sandbox's passwd has no entry for the script.)
	skill := gvisorSkill(t, `echo "$1 $(cat)"
h=$(awk -F: '$3 == '$(id -u)' {print $6}' /etc/passwd 2>/dev/null)
[ -z "$h" ] || [ "$h" = "$TMPDIR" ] || echo "home $h tmp $TMPDIR"
ls /tmp | grep -v '^skill-sandbox-run-' && echo "saw /tmp"
echo x > /tmp/left; echo x > "$TMPDIR/left"
exit $2
`)
	work := gvisorWorkspace(t, skill)
	pl, err := NewPool(1, 0, Sandbox{Backend: BackendGVisor})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	run := func(sb Sandbox, arg string, code int) {
		t.Helper()
		sb.Pool, sb.Stdin = pl, strings.NewReader("in-"+arg)
		o := runIn(t, sb, skill, "scripts/k.sh", arg, strconv.Itoa(code))
		if o.stdout != arg+" in-"+arg+"\n" || o.res.ExitCode != code || o.err != nil {
			t.Errorf("run %s: stdout %q, stderr %q, exit %d, err %v", arg, o.stdout, o.stderr, o.res.ExitCode, o.err)
		}
		if !slices.Contains(o.res.Applied, LayerWatch) {
			t.Errorf("run %s: layers %v lack the watch", arg, o.res.Applied)
		}
	}
	like := Sandbox{WritePaths: []string{work}, Backend: BackendGVisor}
	other := like
	other.AllowNetwork = true
	run(other, "once", 0) // another shape (the host's network) once: not learnt
	run(like, "first", 0)
	if st := pl.GVisorStats(); st.Started != 0 {
		t.Errorf("a shape seen once was started: %+v", st)
	}
	run(like, "again", 0)
	if st := pl.GVisorStats(); st.Taken != 0 || st.Missed != 3 {
		t.Errorf("after the first runs: %+v, want three misses", st)
	}
	for i, arg := range []string{"second", "third"} {
		waitStarted(t, pl, i+1)
		run(like, arg, 3)
		if st := pl.GVisorStats(); st.Taken != i+1 {
			t.Errorf("after the %s run: %+v, want %d taken", arg, st, i+1)
		}
	}
	waitStarted(t, pl, 3)
	run(other, "other", 1)
	if st := pl.GVisorStats(); st.Taken != 2 {
		t.Errorf("a run of another shape took a sandbox: %+v", st)
	}
	pl.Close()
	if left := pooledGVisorLeft(tmp); len(left) > 0 {
		t.Errorf("left after Close: %q", left)
	}
}

// TestGVisorPoolWatchCaps: a run in a pre-started gVisor sandbox keeps
// the caps of the supervisor's watch that an unpooled one keeps
// (TestGVisorWriteGrantCap, TestGVisorWorkFolderCap): the write grant's
// growth past --write-size, the work folder's bytes and entries past
// --workdir-size, and /tmp's bytes (held with the work folder, a host
// folder: the run is killed where an unpooled one meets ENOSPC) end the
// run, which the record says. Without the watch following the sandbox
// (started from the pre-started runsc's pid, its /tmp) each survives.
func TestGVisorPoolWatchCaps(t *testing.T) {
	needRunsc(t)
	tmp := gvisorTMPDIR(t)
	skill := gvisorSkill(t, `case "$1" in
grant) dd if=/dev/zero of="$2/fill.bin" bs=1M count=128 oflag=dsync 2>/dev/null ;;
bytes) dd if=/dev/zero of="$TMPDIR/big" bs=1M count=128 oflag=dsync 2>/dev/null ;;
inodes) i=0; while [ $i -lt 3000 ]; do : > "$TMPDIR/f$i" || exit 3; i=$((i+1)); done ;;
tmp) dd if=/dev/zero of=/tmp/big bs=1M count=128 oflag=dsync 2>/dev/null ;;
esac
echo survived
`)
	out := gvisorWriteFolder(t)
	pl, err := NewPool(1, time.Hour, Sandbox{Backend: BackendGVisor})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	sb := Sandbox{Backend: BackendGVisor, WritePaths: []string{out}, WriteMB: 16, WorkDirMB: 16, MaxFileMB: 512, Pool: pl, Timeout: time.Minute}
	for _, arg := range []string{"teach", "teach"} {
		if o := runIn(t, sb, skill, "scripts/k.sh", arg, out); !strings.Contains(o.stdout, "survived") {
			t.Fatalf("teaching run: stdout %q, stderr %q, err %v", o.stdout, o.stderr, o.err)
		}
	}
	for i, tc := range []struct{ arg, limit string }{
		{"grant", LimitWriteBytes},
		{"bytes", LimitWorkDirBytes},
		{"inodes", LimitWorkDirInodes},
		{"tmp", LimitWorkDirBytes},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			waitStarted(t, pl, i+1)
			o := runIn(t, sb, skill, "scripts/k.sh", tc.arg, out)
			os.Remove(filepath.Join(out, "fill.bin"))
			if st := pl.GVisorStats(); st.Taken != i+1 {
				t.Fatalf("the run did not take a pre-started sandbox: %+v", st)
			}
			if strings.Contains(o.stdout, "survived") || o.res.LimitExceeded != tc.limit || !slices.Contains(o.res.Applied, LayerWatch) {
				t.Errorf("not stopped: limit %q (want %q), stdout %q, layers %v, err %v, stderr %s", o.res.LimitExceeded, tc.limit, o.stdout, o.res.Applied, o.err, o.stderr)
			}
		})
	}
	pl.Close()
	if left := pooledGVisorLeft(tmp); len(left) > 0 {
		t.Errorf("left after Close: %q", left)
	}
}

// BenchmarkGVisorPoolInterleaved times gvisor runs of a script that
// exits at once through the library, with a workspace as the MCP
// server's and the watch on (the default, what mcp and serve use),
// interleaved in one loop: each iteration runs once alone ("unpooled")
// and once taking a sandbox of a Pool ("pooled"), whose replacement is
// waited for before, untimed (calls some seconds apart). Each run is
// timed until its result, not its sandbox's teardown after it (the MCP
// server answers before that). It reports the medians of both,
// unpooled-ms and pooled-ms; ns/op is the pair's.
func BenchmarkGVisorPoolInterleaved(b *testing.B) {
	needRunsc(b)
	skill := gvisorSkill(b, "exit 0\n")
	work := gvisorWorkspace(b, skill)
	pl, err := NewPool(1, time.Hour, Sandbox{Backend: BackendGVisor})
	if err != nil {
		b.Fatal(err)
	}
	defer pl.Close()
	run := func(pl *Pool) time.Duration {
		begun := time.Now()
		res, err := (&Sandbox{SkillDir: skill, WritePaths: []string{work}, Backend: BackendGVisor, Pool: pl}).Run(context.Background(), "scripts/k.sh", nil)
		took := time.Since(begun)
		if err != nil || res.ExitCode != 0 || !slices.Contains(res.Applied, LayerWatch) {
			b.Fatal(err, res)
		}
		res.WaitCleanup()
		return took
	}
	run(pl) // two runs in a row teach the pool the shape
	run(pl)
	var unpooled, pooled []time.Duration
	b.ResetTimer()
	for b.Loop() {
		unpooled = append(unpooled, run(nil))
		b.StopTimer()
		deadline := time.Now().Add(time.Minute)
		for st := pl.GVisorStats(); st.Started-st.Expired-st.Died <= st.Taken; st = pl.GVisorStats() {
			if time.Now().After(deadline) {
				b.Fatalf("no sandbox started: %+v", st)
			}
			time.Sleep(5 * time.Millisecond)
		}
		// Started counts a sandbox once it waits: the pool holds it.
		b.StartTimer()
		pooled = append(pooled, run(pl))
	}
	if st := pl.GVisorStats(); st.Taken != len(pooled) {
		b.Fatalf("%d of %d pooled runs took a sandbox: %+v", st.Taken, len(pooled), st)
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / 1e6
	}
	b.ReportMetric(median(unpooled), "unpooled-ms")
	b.ReportMetric(median(pooled), "pooled-ms")
}

// fsizePast writes 128 MiB to one file of the work folder with SIGXFSZ
// ignored, and prints the errno that stopped it.
const fsizePast = `#!/usr/bin/env python3
import os, signal
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
err = "none"
with open(os.path.join(os.environ["TMPDIR"], "big"), "wb") as f:
    try:
        for i in range(128):
            f.write(b"\0" * (1 << 20))
            f.flush()
    except OSError as e:
        err = str(e.errno)
print("errno %s" % err, flush=True)
`

// TestGVisorPoolLimits: a run in a pre-started gVisor sandbox keeps the
// limits the probes 13, 14, 24 and 36 check on an unpooled one
// (TestGVisorMemoryWatch, TestGVisorTaskLimit): memory held in memfds
// past --memory ends the run (the memory watch of gVisor's figures,
// LimitMemory); --max-procs fails the 16th fork with EAGAIN and
// --max-file-size a write past it with EFBIG (the waiting process sets
// the limits before it executes the script). Without them, the script
// holds its 2 GiB, forks 64 and writes its 128 MiB.
func TestGVisorPoolLimits(t *testing.T) {
	needRunsc(t)
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"hold.py": holdPast, "fork.py": forkPast, "fsize.py": fsizePast, "true.sh": "#!/bin/sh\ntrue\n"})
	pl, err := NewPool(1, time.Hour, Sandbox{Backend: BackendGVisor})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	// A workspace, as the MCP server's: its runs share the sandbox
	// identity (runs with ids of their own have a shape each).
	out := gvisorWriteFolder(t)
	sb := Sandbox{Backend: BackendGVisor, WritePaths: []string{out}, MemoryMB: 256, MaxOpenFiles: 512, MaxProcs: 16, MaxFileMB: 64, Pool: pl, Timeout: time.Minute}
	for range 2 { // two runs in a row teach the pool the shape
		if o := runIn(t, sb, dir, "true.sh"); o.err != nil || o.res.ExitCode != 0 {
			t.Fatalf("teaching run: err %v, exit %d, stderr %q", o.err, o.res.ExitCode, o.stderr)
		}
	}
	for i, tc := range []struct {
		script, arg string
		check       func(o outcome) bool
	}{
		{"hold.py", "memfd", func(o outcome) bool {
			return o.res.LimitExceeded == LimitMemory && o.res.Signal == "SIGKILL" && !strings.Contains(o.stdout, "held all")
		}},
		{"fork.py", "", func(o outcome) bool { return o.stdout == "forked 15 errno 11\n" }},
		{"fsize.py", "", func(o outcome) bool { return o.stdout == "errno 27\n" }},
	} {
		t.Run(tc.script, func(t *testing.T) {
			waitStarted(t, pl, i+1)
			var args []string
			if tc.arg != "" {
				args = []string{tc.arg}
			}
			o := runIn(t, sb, dir, tc.script, args...)
			if st := pl.GVisorStats(); st.Taken != i+1 {
				t.Fatalf("the run did not take a pre-started sandbox: %+v", st)
			}
			if !tc.check(o) {
				t.Errorf("not held: limit %q, signal %q, exit %d, stdout %q, stderr %q", o.res.LimitExceeded, o.res.Signal, o.res.ExitCode, tail(o.stdout), o.stderr)
			}
		})
	}
}

// TestGVisorPoolReplacedSkill: a skill folder replaced (a new folder
// renamed over it) after a sandbox was pre-started for its shape is not
// what that sandbox binds: the run does not take it (counted expired)
// and runs the new folder's script in a sandbox of its own. Without the
// check it would run the old folder's, which its plan no longer names.
func TestGVisorPoolReplacedSkill(t *testing.T) {
	needRunsc(t)
	skill := gvisorSkill(t, "echo old\n")
	work := gvisorWorkspace(t, skill)
	pl, err := NewPool(1, time.Hour, Sandbox{Backend: BackendGVisor})
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	sb := Sandbox{Backend: BackendGVisor, WritePaths: []string{work}, Pool: pl}
	for range 2 {
		if o := runIn(t, sb, skill, "scripts/k.sh"); o.stdout != "old\n" {
			t.Fatalf("teaching run: stdout %q, stderr %q, err %v", o.stdout, o.stderr, o.err)
		}
	}
	waitStarted(t, pl, 1)
	fresh := skill + ".new"
	if err := os.CopyFS(fresh, os.DirFS(skill)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fresh, "scripts", "k.sh"), []byte("#!/bin/sh\necho new\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(fresh, 0o755)
	os.Chmod(filepath.Join(fresh, "scripts"), 0o755)
	if err := os.Rename(skill, skill+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fresh, skill); err != nil {
		t.Fatal(err)
	}
	o := runIn(t, sb, skill, "scripts/k.sh")
	if o.stdout != "new\n" || o.err != nil {
		t.Errorf("the run after the skill folder was replaced: stdout %q, stderr %q, err %v", o.stdout, o.stderr, o.err)
	}
	if st := pl.GVisorStats(); st.Taken != 0 || st.Expired != 1 {
		t.Errorf("%+v: want the pre-started sandbox expired, not taken", st)
	}
}
