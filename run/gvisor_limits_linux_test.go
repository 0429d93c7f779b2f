package run

import (
	"strings"
	"testing"
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
