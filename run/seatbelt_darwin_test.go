package run

// These tests need macOS and have never run: this project is built on
// Linux (see docs/platforms.md). Each attack must fail with the seatbelt
// layer and succeed with it disabled, so a run on a Mac shows that the
// profile, not something else, stops it.

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stage"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// needSeatbelt skips the test without sandbox-exec.
func needSeatbelt(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(stage.SandboxExec); err != nil {
		t.Skipf("%s is missing: %v", stage.SandboxExec, err)
	}
	needTool(t, "python3")
}

// openDir returns a fresh folder that the sandbox identity can reach.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "skill-sandbox-darwin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

func TestSeatbeltAttacks(t *testing.T) {
	needSeatbelt(t)
	home := openDir(t)
	if err := os.Mkdir(filepath.Join(home, ".ssh"), 0o755); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(home, ".ssh", "id_ed25519")
	if err := os.WriteFile(key, []byte("SECRET-KEY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	outside := openDir(t)
	if err := os.Chmod(outside, 0o777); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	dir := newSkill(t, map[string]string{
		"read.py":    "import sys\nprint(open(sys.argv[1]).read())\n",
		"write.py":   "import sys\nopen(sys.argv[1], 'w').write('x')\nprint('WROTE')\n",
		"connect.py": "import socket, sys\nsocket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)\nprint('CONNECTED')\n",
		"ps.py":      "import subprocess\nout = subprocess.run(['/bin/ps', '-axo', 'pid='], capture_output=True, text=True).stdout\nprint('PROCS', len(out.split()))\n",
	})
	for _, tc := range []struct {
		name, script string
		args         []string
		sb           Sandbox
		leak         string
	}{
		{"read a key under --read ~", "read.py", []string{key}, Sandbox{ReadPaths: []string{home}}, "SECRET-KEY"},
		{"write outside the work folder", "write.py", []string{filepath.Join(outside, "x")}, Sandbox{}, "WROTE"},
		{"connect to the host's loopback", "connect.py", []string{port}, Sandbox{}, "CONNECTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := runIn(t, tc.sb, dir, tc.script, tc.args...)
			if o.err != nil || !o.res.Started {
				t.Fatalf("run failed: %v\n%s", o.err, o.stderr)
			}
			if !stageconfig.Has(o.res.Applied, LayerSeatbelt) {
				t.Fatalf("seatbelt not applied: %v", o.res.Missing)
			}
			if strings.Contains(o.stdout, tc.leak) {
				t.Errorf("attack succeeded under the profile: %s", o.stdout)
			}
			tc.sb.Disable = []Layer{LayerSeatbelt}
			o = runIn(t, tc.sb, dir, tc.script, tc.args...)
			if !strings.Contains(o.stdout, tc.leak) {
				t.Errorf("attack failed without the profile too, so the test shows nothing: %v\n%s%s", o.err, o.stdout, o.stderr)
			}
		})
	}
	// Other processes are invisible: ps lists nothing but (at most) the
	// run's own.
	o := runIn(t, Sandbox{}, dir, "ps.py")
	if f := strings.Fields(o.stdout); len(f) == 2 && f[0] == "PROCS" {
		if n, _ := strconv.Atoi(f[1]); n > 3 {
			t.Errorf("ps saw %d processes under the profile", n)
		}
	}
}

// TestSweepKillsNewSession: at the time limit, a child that started its
// own session (out of the process group) is found by parent chain and
// killed.
func TestSweepKillsNewSession(t *testing.T) {
	needSeatbelt(t)
	dir := newSkill(t, map[string]string{"spawn.py": "import subprocess, time\n" +
		"p = subprocess.Popen(['/bin/sleep', '300'], start_new_session=True)\n" +
		"print(p.pid, flush=True)\ntime.sleep(300)\n"})
	o := runIn(t, Sandbox{Timeout: 2 * time.Second}, dir, "spawn.py")
	if !o.res.TimedOut {
		t.Fatalf("not timed out: %v %s", o.err, o.stderr)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(o.stdout))
	if err != nil {
		t.Fatalf("no pid printed: %q", o.stdout)
	}
	for i := 0; i < 50; i++ {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("the child in its own session (pid %d) survived the run", pid)
}

// TestDarwinForkBomb: RLIMIT_NPROC, set at the user's process count plus
// MaxProcs, stops the run's forks past MaxProcs; without the rlimits layer
// they all start.
func TestDarwinForkBomb(t *testing.T) {
	needSeatbelt(t)
	dir := newSkill(t, map[string]string{"bomb.py": "import os, time\nok = 0\n" +
		"for i in range(64):\n    try:\n        if os.fork() == 0:\n            time.sleep(3)\n            os._exit(0)\n        ok += 1\n" +
		"    except OSError:\n        pass\nprint('STARTED', ok)\n"})
	started := func(sb Sandbox) int {
		o := runIn(t, sb, dir, "bomb.py")
		f := strings.Fields(o.stdout)
		if len(f) != 2 {
			t.Fatalf("%v: %q %s", o.err, o.stdout, o.stderr)
		}
		n, _ := strconv.Atoi(f[1])
		return n
	}
	if n := started(Sandbox{MaxProcs: 8}); n > 8 {
		t.Errorf("%d children started under MaxProcs 8", n)
	}
	if n := started(Sandbox{MaxProcs: 8, Disable: []Layer{LayerRlimits}}); n != 64 {
		t.Errorf("without rlimits only %d of 64 started: the test shows nothing", n)
	}
}
