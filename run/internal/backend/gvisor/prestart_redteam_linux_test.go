//go:build linux && (amd64 || arm64)

package gvisor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestPrestartedSecondRunLeavesEtc: a second Run of the same shape on a
// sandbox a first run took must not write its own /etc files (a passwd
// whose home is its work folder) into the sandbox the first run uses:
// it is refused before it touches anything.
func TestPrestartedSecondRunLeavesEtc(t *testing.T) {
	r := needRunscPath(t)
	p := prestartSpec(t, "sleep 3; cat /etc/passwd")
	if !strings.Contains(etcText(p), p.Config.WorkDir) {
		t.Skip("this identity's /etc view does not name the work folder")
	}
	s := mustPrestart(t, r, p)
	defer s.Close()
	type result struct {
		out string
		o   *Outcome
		err error
	}
	first := make(chan result, 1)
	go func() {
		var out bytes.Buffer
		o, err := s.Run(context.Background(), p, &out, &bytes.Buffer{}, backend.NewWatchdog(), nil)
		first <- result{out.String(), o, err}
	}()
	for !s.isUsed() {
		time.Sleep(10 * time.Millisecond)
	}
	q := *p
	q.Config.WorkDir = "/tmp/evil" // as long as /tmp/work: the same shape
	q.Config.Argv = []string{"/bin/true"}
	if Key(&q) != Key(p) {
		t.Fatal("the second run's shape differs: the test proves nothing")
	}
	if _, err := s.Run(context.Background(), &q, &bytes.Buffer{}, &bytes.Buffer{}, backend.NewWatchdog(), nil); !errors.Is(err, backend.ErrStart) {
		t.Errorf("a second run on a used sandbox: %v, want ErrStart", err)
	}
	b, _ := os.ReadFile(filepath.Join(s.dir, "bundle", etcOwnDir, "passwd"))
	if strings.Contains(string(b), "/tmp/evil") {
		t.Errorf("the second run wrote its /etc/passwd into the first run's sandbox: %q", b)
	}
	res := <-first
	if res.err != nil || res.o.ExitCode != 0 || strings.Contains(res.out, "/tmp/evil") || !strings.Contains(res.out, p.Config.WorkDir) {
		t.Errorf("the first run's /etc/passwd: %q, %+v, %v", res.out, res.o, res.err)
	}
}

// etcText is the text of p's own /etc files.
func etcText(p *backend.Spec) string {
	_, files := etcView(p)
	var b strings.Builder
	for _, f := range files {
		b.WriteString(f.Data)
	}
	return b.String()
}

// isUsed reports whether a run took s.
func (s *Prestarted) isUsed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// TestPrestartedSharedTMPDIR: the supervisor's TMPDIR is a folder
// another uid (65534) owns. Left alone, that uid renames the sandbox's
// folder away once the run began and puts its own in its place: the
// watch, which walks the sandbox's /tmp by its path for the run's
// length, then measures that uid's empty folder while the script fills
// the real one, past the work folder's cap. (Before the run, the bind
// check refuses the sandbox.) A pre-started sandbox is refused in such a
// TMPDIR.
func TestPrestartedSharedTMPDIR(t *testing.T) {
	r := needRunscPath(t)
	setpriv := needRootSetpriv(t, "another uid's attack on root's sandbox needs root")
	p := prestartSpec(t, "head -c 1048576 /dev/zero > /tmp/big")
	// Not t.TempDir: runsc opens TMPDIR past its parents, 0700 there.
	base, err := os.MkdirTemp("", "gvisor-shared-tmpdir-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	os.Chmod(base, 0o755)
	shared := filepath.Join(base, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(shared, 65534, 65534)
	t.Setenv("TMPDIR", shared)
	s, err := r.Prestart(p)
	if err != nil {
		if !strings.Contains(err.Error(), "TMPDIR") {
			t.Fatalf("Prestart in a TMPDIR uid 65534 owns: %v, want a refusal naming TMPDIR", err)
		}
		return
	}
	defer s.Close()
	var tmp string
	started := func(_ int, dir string) {
		tmp = dir
		attack := "mv " + s.dir + " " + s.dir + ".real && mkdir -p " + dir
		if out, err := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", attack).CombinedOutput(); err != nil {
			t.Errorf("the attack could not run: %v: %s", err, out)
		}
	}
	o, err := s.Run(context.Background(), p, &bytes.Buffer{}, &bytes.Buffer{}, backend.NewWatchdog(), started)
	defer os.RemoveAll(s.dir + ".real")
	if err != nil || o.ExitCode != 0 {
		t.Fatalf("the run: %+v, %v", o, err)
	}
	if _, err := os.Lstat(filepath.Join(tmp, "big")); err != nil {
		t.Errorf("the folder the watch walks, %s, is not the script's /tmp (uid 65534's): %v", tmp, err)
	}
}

// TestKeyNeedsWatch: a run with the supervisor's watch disabled is not
// pooled. A pooled /tmp is a host folder only the watch caps, where an
// unpooled run's is a tmpfs of the work folder's size: pooled, such a
// run's /tmp would have no cap at all (TestGVisorPoolUnwatchedTmp).
func TestKeyNeedsWatch(t *testing.T) {
	p := testSpec(t)
	if Key(p) == "" {
		t.Fatal("the test's run is not poolable: the test proves nothing")
	}
	p.Disabled = []stageconfig.Layer{stageconfig.LayerWatch}
	if k := Key(p); k != "" {
		t.Errorf("a run without the watch has a pool shape: %.80q...", k)
	}
}

// TestPrestartedLeavesNoProcess: a pooled run's script leaves processes
// behind (in the background, in a session of their own, holding its
// stdout and stderr, ignoring SIGHUP and SIGTERM): the run ends with the
// script, not with them, and once the sandbox is closed no process of
// it is left on the host.
func TestPrestartedLeavesNoProcess(t *testing.T) {
	r := needRunscPath(t)
	p := prestartSpec(t, `trap '' HUP TERM; sleep 300 & setsid sleep 300 & nohup sh -c 'trap "" HUP TERM; sleep 300' & echo started; exit 0`)
	s := mustPrestart(t, r, p)
	defer s.Close()
	id := s.id
	var out bytes.Buffer
	begun := time.Now()
	o, err := s.Run(context.Background(), p, &out, &bytes.Buffer{}, backend.NewWatchdog(), nil)
	if err != nil || o.ExitCode != 0 || out.String() != "started\n" {
		t.Fatalf("the run: %q, %+v, %v", out.String(), o, err)
	}
	if d := time.Since(begun); d > 30*time.Second {
		t.Errorf("the run waited for its script's background processes: %v", d)
	}
	s.Close()
	if left := runscLeft(id); len(left) > 0 {
		t.Errorf("left after Close: %q", left)
	}
}

// TestPrestartedOtherRunsGrant: a run whose grant holds TMPDIR, where
// the waiting sandboxes' folders are, plants a file in a waiting
// sandbox's /tmp (a host folder of its bundle): the later run that
// takes that sandbox must not see it. As root the folders are root's,
// 0700; rootless they are the caller's, whom the script is on the host.
func TestPrestartedOtherRunsGrant(t *testing.T) {
	r := needRunscPath(t)
	p := prestartSpec(t, "cat /tmp/planted 2>/dev/null; echo done")
	attacker := prestartSpec(t, `for d in "$1"/skill-sandbox-gvisor-pool-*/bundle/tmp; do echo planted > "$d/planted" && echo "planted in $d"; done; true`)
	base, err := os.MkdirTemp("", "gvisor-grant-tmpdir-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	os.Chmod(base, 0o755)
	t.Setenv("TMPDIR", base)
	s := mustPrestart(t, r, p)
	defer s.Close()
	attacker.Config.Grants[0].Path = base
	attacker.Config.Argv = append(attacker.Config.Argv, "sh", base)
	var out, errb bytes.Buffer
	o, err := r.Run(context.Background(), attacker, &out, &errb, backend.NewWatchdog(), nil, nil)
	t.Logf("the attacking run: %+v, %v: %s %s", o, err, out.String(), errb.String())
	out.Reset()
	if o, err := s.Run(context.Background(), p, &out, &bytes.Buffer{}, backend.NewWatchdog(), nil); err != nil || o.ExitCode != 0 {
		t.Fatalf("the pooled run: %+v, %v", o, err)
	}
	if strings.Contains(out.String(), "planted") {
		t.Errorf("another run's file reached the pooled run's /tmp: %q", out.String())
	}
}

// TestKeySeparatesShapes: a run that differs from a sandbox's shape in
// what the sandbox fixes when it starts (network, identity, grants and
// their modes, masks, cgroup limits, the work folder's place) has
// another Key, so it never takes a sandbox weaker than its own; what
// the waiting process is handed (arguments, environment, working
// folder, rlimits, the work folder's name) does not change it. (The
// work folder's size is not in the bundle: the run's own watch holds
// the pooled /tmp to it.)
func TestKeySeparatesShapes(t *testing.T) {
	base := testSpec(t)
	k := Key(base)
	if k == "" {
		t.Fatal("the test's run is not poolable")
	}
	differ := []struct {
		name string
		set  func(p *backend.Spec)
	}{
		{"network", func(p *backend.Spec) { p.Config.AllowNetwork = true }},
		{"uid", func(p *backend.Spec) { p.UID++ }},
		{"gid", func(p *backend.Spec) { p.GID++ }},
		{"a read grant made a write grant", func(p *backend.Spec) { p.Config.Grants[0].Write = true }},
		{"a grant's folder", func(p *backend.Spec) { p.Config.Grants[0].Path = p.Config.Skill }},
		{"a grant executable", func(p *backend.Spec) { p.Config.Grants[0].Exec = true }},
		{"one grant fewer", func(p *backend.Spec) { p.Config.Grants = p.Config.Grants[:1] }},
		{"no mask", func(p *backend.Spec) { p.Config.Masked = nil }},
		{"no read-only part", func(p *backend.Spec) { p.Config.ReadOnly = nil }},
		{"memory", func(p *backend.Spec) { p.Cgroup.MemoryBytes = 64 << 20 }},
		{"tasks", func(p *backend.Spec) { p.Cgroup.Pids = 10 }},
		{"CPUs", func(p *backend.Spec) { p.Cgroup.CPUs = 0.5 }},
		{"work folder's parent", func(p *backend.Spec) { p.Config.WorkDir = "/tmp/x/work" }},
	}
	for _, tt := range differ {
		p := testSpec(t)
		p.Config.Skill, p.Config.Dir = base.Config.Skill, base.Config.Dir
		p.Config.Grants = []stageconfig.GrantMount{base.Config.Grants[0], base.Config.Grants[1]}
		p.Config.Masked, p.Config.ReadOnly = base.Config.Masked, base.Config.ReadOnly
		if Key(p) != k {
			t.Fatalf("%s: the copy's Key differs before the change", tt.name)
		}
		tt.set(p)
		if Key(p) == k {
			t.Errorf("%s: the same Key", tt.name)
		}
	}
	p := *base
	p.Config.Argv, p.Config.Env, p.Config.Dir = []string{"/bin/other"}, []string{"B=2"}, "/"
	p.Config.Limits.OpenFiles, p.Config.WorkDir = 8, "/tmp/wxyz"
	if Key(&p) != k {
		t.Error("what the waiting process is handed changed the Key")
	}
}

// TestPrestartedCloseRemovesLockedTmp: a pooled run's script leaves a
// folder in its /tmp (a host folder of the sandbox's) that its owner
// cannot list or enter: Close still removes the sandbox's folder, so
// nothing of the run stays on the host.
func TestPrestartedCloseRemovesLockedTmp(t *testing.T) {
	r := needRunscPath(t)
	p := prestartSpec(t, `mkdir -p /tmp/d/e && echo secret > /tmp/d/e/f && chmod 0 /tmp/d/e /tmp/d && echo locked`)
	s := mustPrestart(t, r, p)
	defer s.Close()
	var out bytes.Buffer
	if o, err := s.Run(context.Background(), p, &out, &bytes.Buffer{}, backend.NewWatchdog(), nil); err != nil || o.ExitCode != 0 || out.String() != "locked\n" {
		t.Fatalf("the run: %q, %+v, %v", out.String(), o, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := os.Lstat(s.dir); !errors.Is(err, os.ErrNotExist) {
		os.Chmod(filepath.Join(s.dir, "bundle", poolTmp, "d"), 0o700)
		os.Chmod(filepath.Join(s.dir, "bundle", poolTmp, "d", "e"), 0o700)
		os.RemoveAll(s.dir)
		t.Errorf("the sandbox's folder stayed after Close: %v", err)
	}
}

// TestRunRemovesLockedWorkFolder: an unpooled run's script locks folders
// (mode 0) in its work folder, a host folder of the bundle: the run
// still removes the bundle, so nothing of the run stays on the host.
func TestRunRemovesLockedWorkFolder(t *testing.T) {
	r := needRunscPath(t)
	p := prestartSpec(t, `mkdir -p /tmp/work/d/e && echo secret > /tmp/work/d/e/f && chmod 0 /tmp/work/d/e /tmp/work/d && echo locked`)
	tmp, err := os.MkdirTemp("", "gvisor-locked-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	os.Chmod(tmp, 0o755)
	t.Setenv("TMPDIR", tmp)
	var out bytes.Buffer
	if o, err := r.Run(context.Background(), p, &out, &bytes.Buffer{}, backend.NewWatchdog(), nil, nil); err != nil || o.ExitCode != 0 || out.String() != "locked\n" {
		t.Fatalf("the run: %q, %+v, %v", out.String(), o, err)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, sandboxDirPrefix+"*")); len(left) > 0 {
		for _, d := range left {
			os.Chmod(filepath.Join(d, "bundle", workFolder, "d"), 0o700)
			os.Chmod(filepath.Join(d, "bundle", workFolder, "d", "e"), 0o700)
		}
		t.Errorf("the run's folder stayed: %q", left)
	}
}
