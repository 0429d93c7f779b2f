package run

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// forkPast forks sleeping children until a fork fails or it has 64, and
// prints how many it made and the errno that stopped it.
const forkPast = `#!/usr/bin/env python3
import os, signal, time
kids = []
err = "none"
try:
    while len(kids) < 64:
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        kids.append(pid)
except OSError as e:
    err = str(e.errno)
print("forked %d errno %s" % (len(kids), err), flush=True)
for pid in kids:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
`

// TestGVisorTaskLimit: --max-procs holds inside gVisor's kernel, as
// RLIMIT_NPROC does natively: a fork past it fails with EAGAIN, the
// script goes on and its run ends normally with its output (the
// script's own process counts, so 15 children of 16), with and without
// the network relay as the sandbox's first process. Without the limit
// in the bundle the script forks all 64 (rootless runsc has no cgroup;
// as root runsc's cgroup counts gVisor's threads too and would end the
// whole sandbox, output lost). Run as root and as uid 65534.
func TestGVisorTaskLimit(t *testing.T) {
	needRunsc(t)
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"fork.py": forkPast})
	for _, tc := range []struct {
		name  string
		hosts []string
	}{{"no network", nil}, {"relay", []string{"example.com"}}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, b := range []string{BackendNative, BackendGVisor} {
				o := runIn(t, Sandbox{Backend: b, MaxProcs: 16, AllowHosts: tc.hosts}, dir, "fork.py")
				if o.err != nil || o.res.ExitCode != 0 {
					t.Fatalf("%s: err %v, exit %d, stderr %q", b, o.err, o.res.ExitCode, o.stderr)
				}
				if want := "forked 15 errno 11\n"; o.stdout != want {
					t.Errorf("%s: %q, want %q (stderr %q)", b, o.stdout, want, strings.TrimSpace(o.stderr))
				}
			}
		})
	}
}

// holdPast holds memory no address space counts, 16 MiB at a time up to
// 2 GiB, in the way argv[1] names (a memfd, or a file in a folder such
// as /dev, a tmpfs of gVisor's, in its memory), printing the total held.
const holdPast = `#!/usr/bin/env python3
import os, sys
how = sys.argv[1]
chunk = b"\x5a" * (16 << 20)
fds = []
for i in range(128):
    if how == "memfd":
        fd = os.memfd_create("hold")
    else:
        fd = os.open("%s/hold%d" % (how, i), os.O_CREAT | os.O_WRONLY, 0o600)
    os.write(fd, chunk)
    fds.append(fd)
    print("held %d MiB" % ((i + 1) * 16), flush=True)
print("held all", flush=True)
`

// TestGVisorMemoryWatch: gVisor's kernel keeps no memory limit but
// RLIMIT_AS, which counts neither memfds nor files in its tmpfs mounts
// (/dev, writable to a rootless script, uid 0 of the sandbox, takes no
// size). The supervisor's watch reads the sandbox's memory and ends the
// run past --memory plus the work folder's size (256 + 256 MiB here),
// the record saying why (LimitMemory) and the output up to then kept. Without it, rootless, the script holds 2 GiB; as root runsc's
// cgroup kills the whole sandbox (exit 137, nothing in the record). Run
// as root and as uid 65534; the overshoot is bounded by the watch's
// pace (it looks again before the room left could fill at 1 GiB/s).
func TestGVisorMemoryWatch(t *testing.T) {
	needRunsc(t)
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"hold.py": holdPast})
	// /tmp is a tmpfs of --workdir-size, which gVisor's kernel keeps
	// itself (ENOSPC, TestGVisorWorkFolderCap).
	ways := []string{"memfd"}
	if os.Geteuid() != 0 {
		ways = append(ways, "/dev")
	}
	for _, how := range ways {
		t.Run(how, func(t *testing.T) {
			o := runIn(t, Sandbox{Backend: BackendGVisor, MemoryMB: 256, MaxOpenFiles: 512, Timeout: time.Minute}, dir, "hold.py", how)
			if o.err != nil {
				t.Fatal(o.err)
			}
			if o.res.LimitExceeded != LimitMemory || o.res.Signal != "SIGKILL" || strings.Contains(o.stdout, "held all") {
				t.Fatalf("limit %q, signal %q, exit %d; stdout %q", o.res.LimitExceeded, o.res.Signal, o.res.ExitCode, tail(o.stdout))
			}
			held := 0
			for _, l := range strings.Split(strings.TrimSpace(o.stdout), "\n") {
				if n, ok := strings.CutPrefix(l, "held "); ok {
					held, _ = strconv.Atoi(strings.TrimSuffix(n, " MiB"))
				}
			}
			// The cap is 512 MiB; runsc's cgroup (as root) allows 256 more.
			if held < 256 || held > 512+256 {
				t.Errorf("held %d MiB before the watch ended the run; stdout %q", held, tail(o.stdout))
			}
			t.Logf("%s: held %d MiB, the cap 512 MiB", how, held)
		})
	}
}

// tail is the last 200 bytes of s.
func tail(s string) string { return s[max(len(s)-200, 0):] }
