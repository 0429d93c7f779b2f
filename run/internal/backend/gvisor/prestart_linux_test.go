//go:build linux && (amd64 || arm64)

package gvisor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// prestartSpec is a run of a fixed shape (benchSpec's) as the test's
// identity allows.
func prestartSpec(t *testing.T, script string) *backend.Spec {
	base, err := os.MkdirTemp("", "gvisor-prestart-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	for _, d := range []string{"skill", "write"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chown(filepath.Join(base, "write"), 65534, 65534)
	p := testSpec(t)
	p.UID, p.GID, p.Timeout = 65534, 65534, time.Minute
	if os.Geteuid() != 0 {
		p.UID, p.GID = os.Geteuid(), os.Getegid()
	}
	c := &p.Config
	c.Skill, c.Dir = filepath.Join(base, "skill"), filepath.Join(base, "skill")
	c.Grants = c.Grants[1:2]
	c.Grants[0].Path = filepath.Join(base, "write")
	c.Masked, c.ReadOnly = nil, nil
	c.Argv, c.Env = []string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin", "A=one"}
	return p
}

func needRunscPath(t *testing.T) *Runtime {
	path, err := exec.LookPath("runsc")
	if err != nil {
		t.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
	return &Runtime{Path: path}
}

// runscLeft lists the processes whose command line names id.
func runscLeft(id string) []string {
	var left []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(id)) {
			left = append(left, e.Name()+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return left
}

// TestPrestartedRun: the script gets the run's arguments, environment,
// working folder, limits and stdin, and its status; a sandbox serves one
// run; a run of another shape is refused untouched; nothing is left.
func TestPrestartedRun(t *testing.T) {
	r := needRunscPath(t)
	p := prestartSpec(t, `echo "$A $0 $1"; [ "$(python3 -c 'import resource; print(resource.getrlimit(resource.RLIMIT_NPROC)[1])')" = 4096 ] || exit 8; pwd; touch /tmp/work/x || exit 9; [ "$(python3 -c 'import os; print(oct(os.stat("/tmp/work").st_mode))')" = 0o40700 ] || exit 10; [ -k /tmp ] && echo sticky >&2; ulimit -n; cat; echo err >&2; exit 3`)
	p.Config.Argv = append(p.Config.Argv, "sh", "arg1")
	p.Config.Limits.OpenFiles = 77
	p.Config.Limits.Procs = 4096
	s := mustPrestart(t, r, p)
	defer s.Close()
	other := prestartSpec(t, "true")
	if _, err := s.Run(context.Background(), other, &bytes.Buffer{}, &bytes.Buffer{}, backend.NewWatchdog(), nil); !errors.Is(err, ErrPoolMismatch) {
		t.Fatalf("a run of another shape: %v, want ErrPoolMismatch", err)
	}
	p.Stdin = strings.NewReader("from stdin\n")
	var out, errb bytes.Buffer
	o, err := s.Run(context.Background(), p, &out, &errb, backend.NewWatchdog(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "one sh arg1\n" + p.Config.Dir + "\n77\nfrom stdin\n"
	if out.String() != want || errb.String() != "sticky\nerr\n" || o.ExitCode != 3 {
		t.Errorf("stdout %q (want %q), stderr %q, exit %d", out.String(), want, errb.String(), o.ExitCode)
	}
	if _, err := s.Run(context.Background(), p, &out, &errb, backend.NewWatchdog(), nil); !errors.Is(err, backend.ErrStart) {
		t.Errorf("a second run in the same sandbox: %v, want it refused", err)
	}
	s.Close()
	if left := runscLeft(s.id); len(left) > 0 {
		t.Errorf("left after the run: %q", left)
	}
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("the sandbox's folder is left: %v", err)
	}
}

// TestPrestartedTimeout: the watchdog ends a pooled run as an unpooled one.
func TestPrestartedTimeout(t *testing.T) {
	r := needRunscPath(t)
	p := prestartSpec(t, "sleep 60")
	p.Timeout = 500 * time.Millisecond
	s := mustPrestart(t, r, p)
	defer s.Close()
	o, err := s.Run(context.Background(), p, &bytes.Buffer{}, &bytes.Buffer{}, backend.NewWatchdog(), nil)
	if err != nil || o.Signal != "SIGKILL" {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	s.Close()
	if left := runscLeft(s.id); len(left) > 0 {
		t.Errorf("left after the run: %q", left)
	}
}

// TestPrestartedIsolatedFromLater: two sandboxes are started ahead;
// the first's run leaves a file in its /tmp and work folder, signals every
// process it can see and writes through every descriptor it has; the
// second's run, afterwards, sees none of it and runs as it should.
func TestPrestartedIsolatedFromLater(t *testing.T) {
	r := needRunscPath(t)
	p := prestartSpec(t, "")
	first := mustPrestart(t, r, p)
	defer first.Close()
	second := mustPrestart(t, r, p)
	defer second.Close()
	p.Config.Argv[2] = `echo left > /tmp/left; echo left > /tmp/work/left; set -- /proc/[0-9]*; echo procs $#; kill -9 -1; for f in /proc/*/fd/*; do echo x > "$f"; done 2>/dev/null; true`
	var out, errb bytes.Buffer
	if _, err := first.Run(context.Background(), p, &out, &errb, backend.NewWatchdog(), nil); err != nil {
		t.Fatal(err)
	}
	// The shell alone: pid 1, the waiting process it replaced.
	if got, _, _ := strings.Cut(out.String(), "\n"); got != "procs 1" {
		t.Errorf("the first run saw other processes: %q (stderr %q)", out.String(), errb.String())
	}
	if !second.Alive() {
		t.Fatal("the first run ended the second sandbox")
	}
	p.Config.Argv[2] = `cat /tmp/left /tmp/work/left 2>&1; echo second`
	out.Reset()
	o, err := second.Run(context.Background(), p, &out, &bytes.Buffer{}, backend.NewWatchdog(), nil)
	if err != nil || o.ExitCode != 0 {
		t.Fatal(err, o)
	}
	if strings.Contains(out.String(), "left\n") || !strings.HasSuffix(out.String(), "second\n") {
		t.Errorf("the second run saw the first's: %q", out.String())
	}
}

// TestPrestartedTamperAsOther: another uid can neither read nor change a
// waiting sandbox's bundle, state or pipes. Root only (it runs as 65534).
func TestPrestartedTamperAsOther(t *testing.T) {
	r := needRunscPath(t)
	setpriv := needRootSetpriv(t, "switching to another uid needs root")
	p := prestartSpec(t, "echo ran")
	s := mustPrestart(t, r, p)
	defer s.Close()
	pid := s.cmd.Process.Pid
	for _, attack := range []string{
		"cat " + s.dir + "/bundle/config.json",
		"echo '{}' > " + s.dir + "/bundle/config.json",
		"ls " + s.dir + "/state",
		"touch " + s.dir + "/x",
		"printf '\\000\\000\\000\\002{}' > /proc/" + itoa(pid) + "/fd/0",
		"cat /proc/" + itoa(pid) + "/fd/1",
		"runsc --root " + s.dir + "/state kill " + s.id + " KILL",
	} {
		cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", attack)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("as uid 65534, %q worked: %s", attack, out)
		}
	}
	var out bytes.Buffer
	o, err := s.Run(context.Background(), p, &out, &bytes.Buffer{}, backend.NewWatchdog(), nil)
	if err != nil || o.ExitCode != 0 || out.String() != "ran\n" {
		t.Errorf("the run after the attacks: %q, %+v, %v", out.String(), o, err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestPrestartedReplacedFolder: a skill folder replaced after the
// sandbox started (a new folder renamed over it) is not what the
// sandbox binds: the run is refused with ErrPoolMismatch, to start its
// own.
func TestPrestartedReplacedFolder(t *testing.T) {
	r := needRunscPath(t)
	p := prestartSpec(t, "echo ran")
	s := mustPrestart(t, r, p)
	defer s.Close()
	skill := p.Config.Skill
	fresh := skill + ".new"
	if err := os.Mkdir(fresh, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(skill, skill+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fresh, skill); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), p, &bytes.Buffer{}, &bytes.Buffer{}, backend.NewWatchdog(), nil); !errors.Is(err, ErrPoolMismatch) {
		t.Fatalf("a run after the skill folder was replaced: %v, want ErrPoolMismatch", err)
	}
}

func TestPoolWorkDir(t *testing.T) {
	mounts := []ociMount{{Destination: "/tmp"}, {Destination: "/tmp/ws"}, {Destination: "/usr"}}
	for _, tc := range []struct {
		dir  string
		mb   int
		want bool
	}{
		{"/tmp/skill-sandbox-run-1", 64, true},
		{"/tmp/skill-sandbox-run-1", 0, false}, // kept: the host's folder
		{"/tmp/x/skill-sandbox-run-1", 64, true},
		{"/tmp/ws/skill-sandbox-run-1", 64, false}, // in a grant: the host's
		{"/tmp/wsx/skill-sandbox-run-1", 64, true},
		{"/var/tmp/skill-sandbox-run-1", 64, false},
		{"/tmp/../etc/x", 64, false},
		{"/tmp/", 64, false},
		{"/tmp", 64, false},
	} {
		p := &backend.Spec{}
		p.Config.WorkDir, p.Config.WorkDirMB = tc.dir, tc.mb
		if got := poolWorkDir(p, mounts); got != tc.want {
			t.Errorf("poolWorkDir(%q, %d MiB) = %v, want %v", tc.dir, tc.mb, got, tc.want)
		}
	}
}

// TestPrestartedStartFails: a run the waiting process cannot start (its
// working folder is missing) fails with backend.ErrStart and the reason,
// as an unpooled run runsc cannot start does, not as the script's exit.
func TestPrestartedStartFails(t *testing.T) {
	r := needRunscPath(t)
	p := prestartSpec(t, "echo ran")
	s := mustPrestart(t, r, p)
	defer s.Close()
	p.Config.Dir = "/nonexistent"
	o, err := s.Run(context.Background(), p, &bytes.Buffer{}, &bytes.Buffer{}, backend.NewWatchdog(), nil)
	if !errors.Is(err, backend.ErrStart) || !strings.Contains(err.Error(), "/nonexistent") {
		t.Fatalf("outcome %+v, error %v; want ErrStart naming the folder", o, err)
	}
}

// mustPrestart starts a sandbox for p's shape or fails the test; the
// caller closes it.
func mustPrestart(t *testing.T, r *Runtime, p *backend.Spec) *Prestarted {
	t.Helper()
	s, err := r.Prestart(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// needRootSetpriv returns setpriv's path for a test that switches to
// another uid, or skips it: such a switch needs root (why) and setpriv.
func needRootSetpriv(t *testing.T, why string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip(why)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv (util-linux)")
	}
	return setpriv
}
