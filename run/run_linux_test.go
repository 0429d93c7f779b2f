package run

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/native"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

const envScript = `import os
for k in sorted(os.environ):
    print(k + "=" + os.environ[k])
print("CWD=" + os.getcwd())
`

func TestEnvironmentAllowlist(t *testing.T) {
	needTool(t, "python3")
	t.Setenv("SKILL_SANDBOX_TEST_SECRET", "s3cret-value")
	t.Setenv("HTTP_PROXY", "http://proxy.invalid:3128")
	t.Setenv("LD_PRELOAD", "/nonexistent.so")
	dir := newSkill(t, map[string]string{"env.py": envScript})
	o := runIn(t, Sandbox{Env: map[string]string{"GREETING": "hello"}, RequestID: "req-42"}, dir, "env.py")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("run: err %v, exit %d, stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(o.stdout), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	if strings.Contains(o.stdout, "s3cret-value") {
		t.Errorf("the caller's secret reached the script:\n%s", o.stdout)
	}
	if _, ok := env["LD_PRELOAD"]; ok {
		t.Errorf("LD_PRELOAD reached the script")
	}
	for _, k := range proxyVars() {
		if v, ok := env[k]; !ok || v != "" {
			t.Errorf("%s = %q (present %v), want present and empty", k, v, ok)
		}
	}
	want := map[string]string{"PATH": sandboxPath, "GREETING": "hello", "SKILL_SANDBOX_REQUEST_ID": "req-42", "SHELL": defaultShell}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if env["HOME"] == "" || env["HOME"] != env["TMPDIR"] {
		t.Errorf("HOME %q and TMPDIR %q should both be the work folder", env["HOME"], env["TMPDIR"])
	}
	if got, want := env["CWD"], filepath.Join(o.res.Validation.Path, "scripts"); got != want {
		t.Errorf("working directory %q, want %q", got, want)
	}
}

func TestRefusedEnv(t *testing.T) {
	dir := newSkill(t, map[string]string{"env.py": envScript})
	for _, key := range []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS", "NODE_PATH", "BASH_ENV", "ENV", "PERL5OPT", "RUBYOPT", "PATH", "HOME", "BAD KEY", ""} {
		t.Run(key, func(t *testing.T) {
			o := runIn(t, Sandbox{Env: map[string]string{key: "x"}}, dir, "env.py")
			if !errors.Is(o.err, ErrBadConfig) {
				t.Fatalf("Env %q: err %v, want ErrBadConfig", key, o.err)
			}
			if o.res.Started {
				t.Errorf("script started despite the refusal")
			}
		})
	}
}

func TestWorkDir(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"w.py": `import os
open("out.txt", "w").write("artifact")
print(os.getcwd())
`})
	o := runIn(t, Sandbox{UseWorkDir: true, KeepWorkDir: true}, dir, "w.py")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("run: err %v, exit %d, stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	wd := o.res.WorkDir
	if wd == "" {
		t.Fatal("KeepWorkDir set but Result.WorkDir is empty")
	}
	defer os.RemoveAll(wd)
	if got := strings.TrimSpace(o.stdout); got != wd {
		t.Errorf("cwd %q, want the work folder %q", got, wd)
	}
	if b, err := os.ReadFile(filepath.Join(wd, "out.txt")); err != nil || string(b) != "artifact" {
		t.Errorf("artifact: %q, %v", b, err)
	}

	o = runIn(t, Sandbox{UseWorkDir: true}, dir, "w.py")
	if o.err != nil || o.res.WorkDir != "" {
		t.Fatalf("err %v, WorkDir %q", o.err, o.res.WorkDir)
	}
	if _, err := os.Stat(strings.TrimSpace(o.stdout)); !os.IsNotExist(err) {
		t.Errorf("work folder %s not removed after the run: %v", o.stdout, err)
	}
}

func TestRefusals(t *testing.T) {
	dir := newSkill(t, map[string]string{
		"ok.py":      "print(1)\n",
		"weird.bin":  "#!/usr/bin/env no-such-interpreter-xyz\n",
		"noexec.txt": "plain text\n",
	})
	os.Chmod(filepath.Join(dir, "scripts", "noexec.txt"), 0o644)
	bad := newSkill(t, nil)
	os.WriteFile(filepath.Join(bad, "SKILL.md"), []byte("---\ndescription: no name\n---\n"), 0o644)
	// Breaks only the specification: run, but not under Strict.
	specOnly := newSkill(t, map[string]string{"ok.py": "print(1)\n"})
	os.WriteFile(filepath.Join(specOnly, "SKILL.md"), []byte("---\nname: Not Valid\ndescription: d\nversion: 1\n---\n"), 0o644)
	cases := []struct {
		name   string
		sb     Sandbox
		dir    string
		script string
		want   error
	}{
		{"invalid skill", Sandbox{}, bad, "ok.py", ErrInvalidSkill},
		{"spec only, strict", Sandbox{Strict: true}, specOnly, "ok.py", ErrInvalidSkill},
		{"missing script", Sandbox{}, dir, "nope.py", ErrBadScript},
		{"traversal", Sandbox{}, dir, "../SKILL.md", ErrBadScript},
		{"absolute", Sandbox{}, dir, "/etc/passwd", ErrBadScript},
		{"unknown interpreter", Sandbox{}, dir, "weird.bin", ErrNoInterpreter},
		{"no interpreter at all", Sandbox{}, dir, "noexec.txt", ErrNoInterpreter},
		{"negative memory", Sandbox{MemoryMB: -1}, dir, "ok.py", ErrBadConfig},
		{"unknown layer", Sandbox{Disable: []Layer{"nope"}}, dir, "ok.py", ErrBadConfig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := runIn(t, c.sb, c.dir, c.script)
			if !errors.Is(o.err, c.want) {
				t.Fatalf("err %v, want %v", o.err, c.want)
			}
			if o.res.Started || o.res.ExitCode != -1 {
				t.Errorf("Started %v ExitCode %d for a refused run", o.res.Started, o.res.ExitCode)
			}
		})
	}
}

func TestExecFailureIsNotAnExitCode(t *testing.T) {
	// An executable file that is neither ELF nor has a shebang: execve
	// fails with ENOEXEC inside the init process.
	dir := newSkill(t, map[string]string{"garbage": "\x01\x02\x03 not a program\n"})
	o := runIn(t, Sandbox{}, dir, "garbage")
	if !errors.Is(o.err, ErrStart) {
		t.Fatalf("err %v, want ErrStart", o.err)
	}
	if o.res.Started {
		t.Errorf("Started is true although execve failed")
	}
	if !strings.Contains(o.err.Error(), "exec format error") {
		t.Errorf("error does not say why: %v", o.err)
	}
}

func TestExitStatus(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{
		"exit7.py":    "import sys\nsys.exit(7)\n",
		"segv.py":     "import ctypes\nctypes.string_at(0)\n",
		"exit0.sh":    "echo fine\n",
		"direct":      "#!/bin/sh\nexit 3\n",
		"shebangs.sh": "#!/bin/sh -e\nfalse\necho unreachable\n",
	})
	cases := []struct {
		script string
		code   int
		signal string
	}{
		{"exit7.py", 7, ""},
		{"segv.py", -1, "SIGSEGV"},
		{"exit0.sh", 0, ""},
		{"direct", 3, ""},
		{"shebangs.sh", 1, ""},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			o := runIn(t, Sandbox{}, dir, c.script)
			if o.err != nil {
				t.Fatalf("a script's own exit status is not an error: %v", o.err)
			}
			if !o.res.Started || o.res.ExitCode != c.code || o.res.Signal != c.signal {
				t.Errorf("Started %v ExitCode %d Signal %q, want %d %q (stderr %s)", o.res.Started, o.res.ExitCode, o.res.Signal, c.code, c.signal, o.stderr)
			}
		})
	}
}

func TestOutputCapAndHash(t *testing.T) {
	needTool(t, "python3")
	const size = 3 << 20
	dir := newSkill(t, map[string]string{"big.py": fmt.Sprintf(`import sys
chunk = bytes(range(256)) * 4096
n = 0
while n < %d:
    sys.stdout.buffer.write(chunk)
    n += len(chunk)
sys.stderr.write("small")
`, size)})
	o := runIn(t, Sandbox{OutputCap: 1 << 20}, dir, "big.py")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	want := bytes.Repeat([]byte{}, 0)
	for len(want) < size {
		for i := 0; i < 256; i++ {
			want = append(want, byte(i))
		}
	}
	sum := sha256.Sum256(want)
	out := o.res.Stdout
	if out.Bytes != size || !out.Truncated || len(out.Captured) != 1<<20 {
		t.Errorf("stdout Bytes %d Truncated %v captured %d, want %d true %d", out.Bytes, out.Truncated, len(out.Captured), size, 1<<20)
	}
	if out.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("stdout SHA-256 %s, want %x", out.SHA256, sum)
	}
	if !bytes.Equal(out.Captured, want[:1<<20]) {
		t.Errorf("captured bytes differ from the first MiB written")
	}
	if len(o.stdout) != size {
		t.Errorf("streamed %d bytes to Stdout, want all %d", len(o.stdout), size)
	}
	if e := o.res.Stderr; e.Bytes != 5 || e.Truncated || string(e.Captured) != "small" {
		t.Errorf("stderr %+v", e)
	}
}

func TestInheritedDescriptors(t *testing.T) {
	needTool(t, "python3")
	// A descriptor the caller left open without close-on-exec must not
	// reach the script (probe 27).
	fd, err := syscall.Open("/dev/null", syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	dir := newSkill(t, map[string]string{"fds.py": `import os
fds = sorted(int(x) for x in os.listdir("/proc/self/fd"))
print(" ".join(map(str, fds)))
`})
	o := runIn(t, Sandbox{}, dir, "fds.py")
	if o.err != nil {
		t.Fatal(o.err)
	}
	// 0, 1, 2 and the descriptor listdir itself opened.
	if got := strings.TrimSpace(o.stdout); got != "0 1 2 3" {
		t.Errorf("script's descriptors: %q, want \"0 1 2 3\" (caller's leaked fd was %d)", got, fd)
	}
}

// markerToken returns a random sleep duration whose digits mark processes
// of one test in /proc/*/cmdline.
func markerToken(t *testing.T) string {
	var b [6]byte
	rand.Read(b[:])
	n := 0
	for _, x := range b {
		n = n*7 + int(x)
	}
	return fmt.Sprintf("86400.%d", n%1000000000+1000000000)
}

// processesWith lists host pids whose command line holds token.
func processesWith(token string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(cmd, []byte(token)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// daemonScript double-forks, starts a new session (where it may) and
// leaves `sleep TOKEN` running with a forged SKILL_SANDBOX_REQUEST_ID, as a
// daemon that tries to pass for another run's process would; the first
// process then waits forever or exits at once.
const daemonScript = `import os, sys, time
token, mode = sys.argv[1], sys.argv[2]
if os.fork() == 0:
    try:
        os.setsid()
    except OSError:
        pass
    if os.fork() == 0:
        os.execve("/bin/sleep", ["sleep", token], {"SKILL_SANDBOX_REQUEST_ID": "forged"})
    os._exit(0)
time.sleep(0.3)
print("daemon started", flush=True)
if mode == "wait":
    time.sleep(3600)
`

func TestNothingOutlivesTheRun(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"daemon.py": daemonScript})
	cases := []struct {
		name    string
		disable []Layer
		mode    string
	}{
		{"timeout", nil, "wait"},
		{"script exits", nil, "exit"},
		{"timeout without pidns", []Layer{LayerPIDNS}, "wait"},
		{"exit without pidns", []Layer{LayerPIDNS}, "exit"},
		{"timeout without namespaces", []Layer{LayerUserNS}, "wait"},
		{"exit without namespaces", []Layer{LayerUserNS}, "exit"},
		// The layer that holds the daemon in the run's session: without
		// it (and the PID namespace and the cgroup, which end the tree
		// as well) the forged daemon escapes.
		{"escape without pidns, cgroup and seccomp", []Layer{LayerPIDNS, LayerCgroup, LayerSeccomp}, "exit"},
		{"exit without pidns and cgroup", []Layer{LayerPIDNS, LayerCgroup}, "exit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			token := markerToken(t)
			// The daemon must start before the time limit, also on a
			// loaded machine; a run that exits by itself needs none.
			timeout := 20 * time.Second
			if c.mode == "wait" {
				timeout = 3 * time.Second
			}
			sb := Sandbox{Timeout: timeout, Disable: c.disable}
			if slices.Contains(c.disable, LayerUserNS) {
				// Without a user namespace RLIMIT_NPROC counts every task
				// of the caller's uid on the host: other packages' tests
				// of the same uid (rootless gVisor sandboxes, dozens of
				// threads each) must not starve the daemon's fork.
				sb.MaxProcs = 1 << 15
			}
			o := runIn(t, sb, dir, "daemon.py", token, c.mode)
			t.Cleanup(func() {
				for _, pid := range processesWith(token) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			if o.err != nil {
				t.Fatalf("err %v stderr %s", o.err, o.stderr)
			}
			if !strings.Contains(o.stdout, "daemon started") {
				t.Fatalf("the daemon did not start: stdout %q stderr %q", o.stdout, o.stderr)
			}
			if wantTimeout := c.mode == "wait"; o.res.TimedOut != wantTimeout {
				t.Errorf("TimedOut %v, want %v", o.res.TimedOut, wantTimeout)
			}
			if o.res.TimedOut && o.res.Signal != "SIGKILL" {
				t.Errorf("timed out run ended with signal %q, want SIGKILL", o.res.Signal)
			}
			left := processesWith(token)
			if escapes := stageconfig.Has(c.disable, LayerSeccomp); escapes && len(left) == 0 {
				t.Errorf("the daemon did not escape without seccomp and pidns: the test shows nothing")
			} else if !escapes && len(left) > 0 {
				t.Errorf("processes outlived the run: %v", left)
			}
		})
	}
}

// startedWriter closes started at the first write.
type startedWriter struct {
	once    sync.Once
	started chan struct{}
}

func (w *startedWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.started) })
	return len(p), nil
}

func TestCancel(t *testing.T) {
	dir := newSkill(t, map[string]string{"sleep.sh": "echo started\nsleep 60\n"})
	ctx, cancel := context.WithCancel(context.Background())
	out := &startedWriter{started: make(chan struct{})}
	sb := Sandbox{SkillDir: dir, Stdout: out}
	go func() {
		<-out.started
		cancel()
	}()
	res, err := sb.Run(ctx, "sleep.sh", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Canceled || res.TimedOut || res.Signal != "SIGKILL" {
		t.Errorf("Canceled %v TimedOut %v Signal %q, want true false SIGKILL", res.Canceled, res.TimedOut, res.Signal)
	}
	if res.Duration > 30*time.Second {
		t.Errorf("the run was not stopped by cancellation (took %s)", res.Duration)
	}

	res, err = sb.Run(ctx, "sleep.sh", nil) // already canceled
	if err != nil || !res.Canceled || res.Started {
		t.Errorf("pre-canceled run: err %v Canceled %v Started %v", err, res.Canceled, res.Started)
	}
}

func TestRequireIsolation(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"hi.py": "print('script ran')\n"})
	var warn bytes.Buffer
	o := runIn(t, Sandbox{RequireIsolation: true, Disable: []Layer{LayerSeccomp}, Warnings: &warn}, dir, "hi.py")
	if !errors.Is(o.err, ErrIsolation) {
		t.Fatalf("err %v, want ErrIsolation", o.err)
	}
	if o.res.Started || strings.Contains(o.stdout, "script ran") {
		t.Errorf("the script ran although isolation was required")
	}
	if !strings.Contains(o.err.Error(), "without seccomp: disabled") {
		t.Errorf("the error does not name the missing layer: %v", o.err)
	}
	if warn.Len() > 0 {
		t.Errorf("a refused run warned besides its error: %q", warn.String())
	}
	// The host may lack a layer of its own (no cgroup for an
	// unprivileged caller); seccomp must be among the missing, disabled.
	if !slices.Contains(o.res.Missing, Missing{Layer: LayerSeccomp, Reason: "disabled"}) {
		t.Errorf("Missing = %+v", o.res.Missing)
	}
	for _, m := range o.res.Missing {
		if m.Layer != LayerSeccomp && m.Layer != LayerCgroup {
			t.Errorf("missing %s besides the disabled seccomp: %+v", m.Layer, o.res.Missing)
		}
	}
}

func TestResourceLimits(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{
		"membomb.py": "b = bytearray(2 << 30)\nprint('allocated')\n",
		// Past the relaxed RLIMIT_AS (MemoryMB + native.AddressReserveMB): refused at once.
		"hugebomb.py": "b = bytearray(20 << 30)\nprint('allocated')\n",
		"forkbomb.py": `import os, time
n = 0
try:
    for i in range(500):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError as e:
    print("fork failed after", n, e)
else:
    print("forked", n)
`,
		"bigfile.py": `import os
try:
    with open(os.path.join(os.environ["TMPDIR"], "f"), "wb") as f:
        f.write(b"x" * (3 << 20))
    print("wrote")
except OSError as e:
    print("failed", e)
`,
		"cpu.py": "while True:\n    pass\n",
	})
	cases := []struct {
		name   string
		sb     Sandbox
		script string
		check  func(o outcome) string
	}{
		{"memory bomb", Sandbox{MemoryMB: 256}, "membomb.py", func(o outcome) string {
			// Under the relaxed RLIMIT_AS the cgroup's OOM killer or the
			// watch stops it; with both disabled, RLIMIT_AS refuses it.
			stopped := strings.Contains(o.stderr, "MemoryError") || o.res.OOMKills > 0 || o.res.LimitExceeded == LimitMemory
			if strings.Contains(o.stdout, "allocated") || !stopped {
				return "2 GiB allocation was not stopped"
			}
			return ""
		}},
		{"single mapping past the address-space limit", Sandbox{MemoryMB: 256}, "hugebomb.py", func(o outcome) string {
			if strings.Contains(o.stdout, "allocated") || !strings.Contains(o.stderr, "MemoryError") {
				return "20 GiB allocation was not refused by RLIMIT_AS"
			}
			return ""
		}},
		{"fork bomb", Sandbox{MaxProcs: 20}, "forkbomb.py", func(o outcome) string {
			if !strings.Contains(o.stdout, "fork failed after") {
				return "500 forks succeeded"
			}
			// In a user namespace the script gets exactly 20 tasks:
			// itself and 19 children (the init process, one task, is added
			// to the limit).
			var n int
			if _, err := fmt.Sscanf(o.stdout, "fork failed after %d ", &n); err == nil && stageconfig.Has(o.res.Applied, LayerUserNS) && n != 19 {
				return fmt.Sprintf("MaxProcs 20 allowed the script %d children, want 19", n)
			}
			return ""
		}},
		{"file size", Sandbox{MaxFileMB: 1}, "bigfile.py", func(o outcome) string {
			if !strings.Contains(o.stdout, "File too large") {
				return "3 MiB file written under a 1 MiB limit"
			}
			return ""
		}},
		{"cpu time", Sandbox{Timeout: 1500 * time.Millisecond}, "cpu.py", func(o outcome) string {
			if o.res.Signal != "SIGKILL" || !o.res.TimedOut {
				return "CPU loop not killed"
			}
			return ""
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := runIn(t, c.sb, dir, c.script)
			if o.err != nil {
				t.Fatal(o.err)
			}
			if msg := c.check(o); msg != "" {
				t.Errorf("%s: exit %d signal %q stdout %q stderr %q", msg, o.res.ExitCode, o.res.Signal, o.stdout, o.stderr)
			}
		})
	}
}

func TestNodeStartsUnderTheMemoryLimit(t *testing.T) {
	needTool(t, "node")
	dir := newSkill(t, map[string]string{"hi.js": "console.log('node ok ' + (process.execArgv.join(' ')))\n"})
	o := runIn(t, Sandbox{}, dir, "hi.js")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	if want := fmt.Sprintf("--max-old-space-size=%d", DefaultMemoryMB); !strings.Contains(o.stdout, want) {
		t.Errorf("node output %q lacks %s", o.stdout, want)
	}
	if want := DefaultMemoryMB + native.AddressReserveMB; o.res.AddressSpaceMB != want {
		t.Errorf("AddressSpaceMB %d, want %d", o.res.AddressSpaceMB, want)
	}
}

func TestResultAccounting(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"work.py": `x = bytearray(64 << 20)
for i in range(0, len(x), 4096):
    x[i] = 1
n = 0
for i in range(3000000):
    n += i
print(n)
`})
	o := runIn(t, Sandbox{}, dir, "work.py")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	r := o.res
	if r.MaxRSSKB < 64<<10 {
		t.Errorf("MaxRSSKB %d, want at least the 64 MiB the script touched", r.MaxRSSKB)
	}
	if r.CPUTime <= 0 || r.Duration <= 0 {
		t.Errorf("CPUTime %s Duration %s", r.CPUTime, r.Duration)
	}
	if r.Skill != skillName || r.Script != "scripts/work.py" || len(r.Interpreter) != 1 || filepath.Base(r.Interpreter[0]) != "python3" {
		t.Errorf("Skill %q Script %q Interpreter %v", r.Skill, r.Script, r.Interpreter)
	}
}

func TestWorkDirSizeCap(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"fill.py": `import os
n = 0
try:
    for i in range(64):
        with open(os.path.join(os.environ["TMPDIR"], "f%d" % i), "wb") as f:
            f.write(b"x" * (1 << 20))
        n += 1
    print("wrote", n)
except OSError as e:
    print("stopped after", n, "MiB:", e)
`})
	o := runIn(t, Sandbox{WorkDirMB: 8}, dir, "fill.py")
	if o.err != nil {
		t.Fatal(o.err)
	}
	if !strings.Contains(o.stdout, "No space left on device") {
		t.Errorf("64 files of 1 MiB written into an 8 MiB work folder: %q", o.stdout)
	}
	// Without the mount namespace there is no tmpfs; without the watch
	// too (TestWatchAttacks), the same script fills the host folder (what
	// the cap prevents).
	o = runIn(t, Sandbox{WorkDirMB: 8, Disable: []Layer{LayerMountNS, LayerWatch}}, dir, "fill.py")
	if o.err != nil || !strings.Contains(o.stdout, "wrote 64") {
		t.Errorf("without mountns and the watch: err %v stdout %q", o.err, o.stdout)
	}
}

func TestMultiprocessingPool(t *testing.T) {
	needTool(t, "python3")
	// Pools need POSIX semaphores, i.e. a writable /dev/shm.
	dir := newSkill(t, map[string]string{"pool.py": `import multiprocessing as mp
def square(x):
    return x * x
if __name__ == "__main__":
    with mp.Pool(2) as p:
        print(sum(p.map(square, range(10))))
`})
	o := runIn(t, Sandbox{}, dir, "pool.py")
	if o.err != nil || o.res.ExitCode != 0 || strings.TrimSpace(o.stdout) != "285" {
		t.Fatalf("err %v exit %d stdout %q stderr %s", o.err, o.res.ExitCode, o.stdout, o.stderr)
	}
}

// pidScript reports how the script sits in its PID namespace, then acts on
// its first argument: "signal-init" sends PID 1 every catchable signal
// whose default action would end a process (or make a Go program exit);
// "self-term" sends itself SIGTERM.
const pidScript = `echo "ppid=$PPID"
if cat /proc/1/environ >/dev/null 2>&1; then echo environ=readable; else echo environ=closed; fi
sed -n 's/^\(NoNewPrivs\|Seccomp\):[[:space:]]*/reaper-\1=/p' /proc/1/status
# Every thread of the reaper has the main thread's filters (the same count,
# mode 2): the reaper is single-threaded, so this holds by construction.
main=$(grep '^Seccomp_filters:' /proc/1/status)
other=0
for f in /proc/1/task/*/status; do
  { grep -q '^Seccomp:[[:space:]]*2$' "$f" && [ "$(grep '^Seccomp_filters:' "$f")" = "$main" ]; } || other=$((other+1))
done
echo "reaper-threads-unlike-main=$other"
sh -c 'sleep 30 & echo "orphan=$!"'
sleep 0.1
for f in /proc/[0-9]*/stat; do
  read -r pid comm state ppid rest < "$f" 2>/dev/null || continue
  [ "$comm" = "(sleep)" ] && echo "orphan-parent=$ppid"
done
case "$1" in
signal-init)
  sent=0
  for s in TERM INT HUP QUIT ABRT SYS TRAP USR1 USR2 ALRM PIPE; do kill -s "$s" 1 && sent=$((sent+1)); done
  echo "sent=$sent"
  # The Go runtime takes a queued SIGSEGV for a real fault.
  python3 -c 'import ctypes; print("queued=%d" % ctypes.CDLL(None, use_errno=True).sigqueue(1, 11, 0))'
  python3 -c 'import ctypes; print("queued=%d" % ctypes.CDLL(None, use_errno=True).sigqueue(1, 7, 0))' 
  sleep 0.3
  echo alive
  exit 5 ;;
self-term)
  kill -TERM $$
  echo survived ;;
esac
`

// TestPIDNamespaceInit checks the init process, PID 1 of the run: the
// script is its child with ordinary signal semantics (a signal it sends
// itself kills it: neither the kernel's PID 1 shield nor a disposition
// ignored by the init process reaches it), orphans go to the init process
// rather than to the script, the init process's memory and environment are
// closed to the script, it runs under no_new_privs and the seccomp filter
// itself, on every thread, and signals the script sends PID 1 (which shares
// its Landlock domain, so the signal scope does not apply) neither kill the
// init process nor change the run's status.
func TestPIDNamespaceInit(t *testing.T) {
	fullIsolation(t)
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"pid.sh": pidScript})

	o := runIn(t, Sandbox{}, dir, "pid.sh", "self-term")
	if o.err != nil {
		t.Fatalf("err %v stderr %s", o.err, o.stderr)
	}
	for _, want := range []string{"ppid=1\n", "environ=closed\n", "orphan-parent=1\n", "reaper-NoNewPrivs=1\n", "reaper-Seccomp=2\n", "reaper-threads-unlike-main=0\n"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, o.stdout)
		}
	}
	if o.res.Signal != "SIGTERM" || strings.Contains(o.stdout, "survived") {
		t.Errorf("kill -TERM $$: Signal %q ExitCode %d, stdout:\n%s", o.res.Signal, o.res.ExitCode, o.stdout)
	}

	o = runIn(t, Sandbox{}, dir, "pid.sh", "signal-init")
	if o.err != nil {
		t.Fatalf("err %v stderr %s", o.err, o.stderr)
	}
	if !strings.Contains(o.stdout, "sent=11\n") || strings.Count(o.stdout, "queued=0\n") != 2 {
		t.Errorf("the signals did not reach PID 1 (stderr %s):\n%s", o.stderr, o.stdout)
	}
	if o.res.ExitCode != 5 || o.res.Signal != "" || !strings.Contains(o.stdout, "alive") {
		t.Errorf("after signalling PID 1: ExitCode %d Signal %q, stdout:\n%s", o.res.ExitCode, o.res.Signal, o.stdout)
	}
}

// TestTimedOutRunAccounting checks that a run ended by its time limit still
// reports the CPU time its processes used and the script's own status:
// under a PID namespace the init process kills and reaps the namespace itself
// (SIGKILL to PID 1 would make the kernel discard the children's usage).
func TestTimedOutRunAccounting(t *testing.T) {
	needTool(t, "python3")
	// Each of the two processes burns 150 ms of its own CPU time, says so,
	// and spins on until the time limit: the usage reported must hold
	// what they said they used, however loaded the machine is.
	dir := newSkill(t, map[string]string{"spin.py": `import os, sys, time
os.fork()
while time.process_time() < 0.15:
    pass
print("burned", flush=True)
while True:
    pass
`})
	o := runIn(t, Sandbox{Timeout: 3 * time.Second}, dir, "spin.py")
	if o.err != nil || !o.res.TimedOut || o.res.Signal != "SIGKILL" {
		t.Fatalf("err %v TimedOut %v Signal %q", o.err, o.res.TimedOut, o.res.Signal)
	}
	burned := strings.Count(o.stdout, "burned\n")
	if burned == 0 {
		t.Skipf("the machine is too loaded: neither process got 150 ms of CPU in 3 s (CPUTime %s)", o.res.CPUTime)
	}
	if want := time.Duration(burned) * 150 * time.Millisecond; o.res.CPUTime < want {
		t.Errorf("CPUTime %s, but %d process(es) said they used 150 ms each", o.res.CPUTime, burned)
	}
}

// TestNprocUnderLowHardLimit checks that a caller whose hard RLIMIT_NPROC
// is just above MaxProcs still gets a run: the init process adds itself to
// the script's limit but must stay within the hard limit it inherited. The
// test binary re-runs this test under `ulimit -u` (a hard limit, once
// lowered, cannot be raised again without CAP_SYS_RESOURCE).
func TestNprocUnderLowHardLimit(t *testing.T) {
	needTool(t, "python3")
	if os.Getenv("SKILL_SANDBOX_TEST_LOW_NPROC") != "" {
		dir := newSkill(t, map[string]string{"ok.py": "print('ok')\n"})
		o := runIn(t, Sandbox{MaxProcs: 10}, dir, "ok.py")
		if o.err != nil || o.res.ExitCode != 0 || !strings.Contains(o.stdout, "ok") {
			t.Errorf("err %v exit %d stderr %q", o.err, o.res.ExitCode, o.stderr)
		}
		return
	}
	needTool(t, "bash")
	if os.Geteuid() != 0 {
		// RLIMIT_NPROC counts every task of the caller's user, the
		// re-run test binary's own threads and the user's other
		// processes included: for an unprivileged caller a hard limit of
		// 10-20 is used up before the run starts (root is exempt).
		t.Skipf("uid %d: a hard RLIMIT_NPROC of 10-20 is taken by this user's own tasks (%d processes) before the run", os.Geteuid(), posix.CountProcs(os.Geteuid()))
	}
	for hard := 10; hard <= 20; hard++ {
		cmd := exec.Command("bash", "-c", `ulimit -u "$1" && exec "$2" -test.run '^TestNprocUnderLowHardLimit$' -test.count=1 -test.v`,
			"bash", strconv.Itoa(hard), os.Args[0])
		cmd.Env = append(os.Environ(), "SKILL_SANDBOX_TEST_LOW_NPROC=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Errorf("hard RLIMIT_NPROC %d, MaxProcs 10: %v\n%s", hard, err, out)
		}
	}
}
