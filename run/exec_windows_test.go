package run

// These tests need Windows and have never run: this project is built on
// Linux, and Wine cannot start Go binaries since Go 1.22 (see
// docs/platforms.md). Every run but the first passes AllowDegraded: the
// appcontainer layer is always missing.

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/windows"
)

func needPython(t *testing.T) {
	t.Helper()
	for _, p := range []string{"py", "python", "python3"} {
		if _, err := exec.LookPath(p); err == nil {
			return
		}
	}
	t.Skip("no python on PATH")
}

func TestWindowsRefusesByDefault(t *testing.T) {
	needPython(t)
	dir := newSkill(t, map[string]string{"ok.py": "print('ok')\n"})
	o := runIn(t, Sandbox{}, dir, "ok.py")
	if !errors.Is(o.err, ErrIsolation) || !strings.Contains(o.err.Error(), "appcontainer") || o.res.Started {
		t.Fatalf("default run: %v (started %v)", o.err, o.res.Started)
	}
	o = runIn(t, Sandbox{AllowDegraded: true}, dir, "ok.py")
	if o.err != nil || strings.TrimSpace(o.stdout) != "ok" || !stageconfig.Has(o.res.Applied, LayerJob) {
		t.Fatalf("degraded run: %v %q applied %v missing %v", o.err, o.stdout, o.res.Applied, o.res.Missing)
	}
}

func TestWindowsEnvironmentAllowlist(t *testing.T) {
	needPython(t)
	t.Setenv("SKILL_TEST_SECRET", "s3cret")
	dir := newSkill(t, map[string]string{"env.py": "import os\nprint(os.environ.get('SKILL_TEST_SECRET'), os.environ.get('HTTPS_PROXY') == '')\n"})
	o := runIn(t, Sandbox{AllowDegraded: true}, dir, "env.py")
	if o.err != nil || strings.Contains(o.stdout, "s3cret") || !strings.Contains(o.stdout, "None True") {
		t.Errorf("%v: %q %s", o.err, o.stdout, o.stderr)
	}
}

// TestWindowsJobProcessLimit is the fork bomb: with the job, the children
// past MaxProcs fail to start; without it, they all start.
func TestWindowsJobProcessLimit(t *testing.T) {
	needPython(t)
	dir := newSkill(t, map[string]string{"bomb.py": "import subprocess, sys\nok = 0\nps = []\n" +
		"for i in range(12):\n    try:\n        ps.append(subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(5)']))\n        ok += 1\n" +
		"    except OSError:\n        pass\nprint('STARTED', ok)\nfor p in ps: p.kill()\n"})
	started := func(sb Sandbox) int {
		o := runIn(t, sb, dir, "bomb.py")
		f := strings.Fields(o.stdout)
		if len(f) != 2 {
			t.Fatalf("%v: %q %s", o.err, o.stdout, o.stderr)
		}
		n, _ := strconv.Atoi(f[1])
		return n
	}
	if n := started(Sandbox{AllowDegraded: true, MaxProcs: 4}); n >= 4 {
		t.Errorf("the job let %d children start under MaxProcs 4", n)
	}
	if n := started(Sandbox{AllowDegraded: true, MaxProcs: 4, Disable: []Layer{LayerJob}}); n != 12 {
		t.Errorf("without the job only %d of 12 started: the test shows nothing", n)
	}
}

// TestWindowsJobOutlivingProcess: a detached child left running when the
// script exits dies with the job.
func TestWindowsJobOutlivingProcess(t *testing.T) {
	needPython(t)
	dir := newSkill(t, map[string]string{"daemon.py": "import subprocess, sys\n" +
		"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], creationflags=0x00000008)\n" +
		"print(p.pid)\n"})
	o := runIn(t, Sandbox{AllowDegraded: true}, dir, "daemon.py")
	pid, err := strconv.Atoi(strings.TrimSpace(o.stdout))
	if err != nil {
		t.Fatalf("%v: %q %s", o.err, o.stdout, o.stderr)
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return // gone
	}
	defer windows.CloseHandle(h)
	if ev, _ := windows.WaitForSingleObject(h, 5000); ev != windows.WAIT_OBJECT_0 {
		windows.TerminateProcess(h, 1)
		t.Errorf("the detached child %d outlived the run", pid)
	}
}

// TestWindowsBatchInjection: an argument with cmd.exe operators reaches
// the batch file as text, and one with % is refused.
func TestWindowsBatchInjection(t *testing.T) {
	dir := newSkill(t, map[string]string{"echo.cmd": "@echo off\r\necho ARG=%1\r\n"})
	o := runIn(t, Sandbox{AllowDegraded: true}, dir, "echo.cmd", "a&echo INJECTED")
	if o.err != nil {
		t.Fatalf("%v %s", o.err, o.stderr)
	}
	for _, line := range strings.Split(o.stdout, "\n") {
		if strings.TrimSpace(line) == "INJECTED" {
			t.Errorf("cmd.exe ran the injected command: %q", o.stdout)
		}
	}
	o = runIn(t, Sandbox{AllowDegraded: true}, dir, "echo.cmd", "%PATH%")
	if !errors.Is(o.err, ErrBadConfig) {
		t.Errorf("%%PATH%% accepted: %v %q", o.err, o.stdout)
	}
}
