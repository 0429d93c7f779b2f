package gvisor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"github.com/skill-sandbox/skill-sandbox/run/internal/workdir"
)

// ErrPoolMismatch is Prestarted.Run's error for a run whose shape is not
// the sandbox's: nothing of the sandbox was used, and the run may start
// one of its own.
var ErrPoolMismatch = errors.New("the pre-started sandbox does not fit the run")

// Prestarted is a gVisor sandbox started ahead of the one run that will
// use it: runsc run of a bundle whose mounts, identity, namespaces,
// seccomp rules and cgroup are those of the runs it fits (Key), and whose
// first process is this program, waiting on its stdin (a pipe of the
// supervisor's) for the run's arguments, environment, working folder
// and limits. Run hands them over; the process executes the script in
// place, so the sandbox ends with the script and cannot serve another
// run. A Prestarted is used once at most; Close ends it, used or not.
//
// Only runs without a host allowlist fit (the filtering proxy's relay is
// the first process of those).
type Prestarted struct {
	r    *Runtime
	key  string
	from string // the slot's path in the run it was shaped on (SlotKey)
	// Slot is the write grant of the sandbox's own (see PrestartSlot);
	// "" for a sandbox of a fixed shape.
	Slot    string
	dir     string
	id      string
	global  []string // runsc's flags for kill and delete
	network []string // runsc's network flags
	cmd     *exec.Cmd
	config  *os.File // the waiting process's stdin
	stdout  *os.File
	stderr  *os.File
	// binds are the host files and folders the bundle binds, as they
	// were when the sandbox started (see sameBinds).
	binds []bindSource
	// u is the cgroup around runsc's (see usage), nil where there is
	// none; cgroupsPath is runsc's cgroup in it.
	u           *usage
	cgroupsPath string
	exited      chan struct{} // closed when runsc run has exited
	err         error         // runsc run's wait error, once exited is closed
	// Born is when the sandbox was started.
	Born time.Time

	mu     sync.Mutex
	used   bool
	closed bool
}

// Key is the shape of p's run: what a sandbox must have been started
// with to serve it (the bundle but its process's arguments, environment,
// working folder and limits; the sandbox's own /etc files; the network
// flags; the memory the watch holds it to). "" when p cannot use a
// pre-started sandbox: a run with the filtering proxy (its relay is the
// sandbox's first process), handed-over files, a kept work folder, a
// work folder outside /tmp (see poolWorkDir), or the watch disabled.
func Key(p *backend.Spec) string { return key(p, "", "") }

// key is Key with the mounts' paths at or below from read at to (see
// swapPrefix): a slot's shape (SlotKey).
func key(p *backend.Spec, from, to string) string {
	if Check(p) != nil || p.Proxy != nil || len(p.ExtraFiles) > 0 || p.Config.WorkDirMB <= 0 {
		return ""
	}
	// A pooled /tmp is a host folder only the supervisor's watch caps
	// (an unpooled one is a tmpfs of the work folder's size): without
	// the watch it would have no cap at all.
	if stageconfig.Has(p.Disabled, stageconfig.LayerWatch) {
		return ""
	}
	s := poolSpec(p, "/bundle")
	if !poolWorkDir(p, s.Mounts) {
		return ""
	}
	swapPrefix(s.Mounts, from, to)
	s.Process.Args, s.Process.Env, s.Process.Cwd, s.Process.Rlimits = nil, nil, "", nil
	files := etcFilesOf(p)
	b, err := json.Marshal(struct {
		Spec     *ociSpec
		Files    any
		Network  bool
		Rootless bool
		Memory   int64
		// The work folder's parent, made ahead in the sandbox's /tmp.
		WorkParent string
	}{s, files, p.Config.AllowNetwork, os.Geteuid() != 0, memoryCap(p), filepath.Dir(p.Config.WorkDir)})
	if err != nil {
		return ""
	}
	return string(b)
}

// Prestart starts a sandbox for a later run of p's shape (see Key); p's
// own arguments, environment and limits are not used. The caller must
// Close it.
func (r *Runtime) Prestart(p *backend.Spec) (*Prestarted, error) {
	return r.prestart(p, Key(p), "", "")
}

// prestart starts a sandbox of key, p's bundle with its mounts at or
// below from moved to slot (none when from is "").
func (r *Runtime) prestart(p *backend.Spec, key, from, slot string) (*Prestarted, error) {
	if key == "" {
		return nil, fmt.Errorf("%w: this run cannot use a pre-started sandbox", backend.ErrUnsupported)
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: finding this program for the waiting process: %v", backend.ErrStart, err)
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	s := &Prestarted{r: r, key: key, from: from, Slot: slot, id: "ss-pool-" + hex.EncodeToString(rnd[:]), exited: make(chan struct{})}
	// 0700, the supervisor's: the bundle and runsc's state are no one
	// else's to read or change.
	if s.dir, err = privateTempDir("skill-sandbox-gvisor-pool-"); err != nil {
		return nil, fmt.Errorf("%w: %v", backend.ErrStart, err)
	}
	if s.u = newUsage(s.id); s.u != nil {
		s.cgroupsPath = s.u.path()
	}
	if err := s.start(p, exe); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// start writes the bundle and starts runsc run of the waiting process,
// until it says it waits.
func (s *Prestarted) start(p *backend.Spec, exe string) error {
	bundle := filepath.Join(s.dir, "bundle")
	if err := os.Mkdir(bundle, 0o755); err != nil {
		return fmt.Errorf("%w: %v", backend.ErrStart, err)
	}
	if err := writePoolBundle(p, bundle, exe, s.cgroupsPath, s.from, s.Slot); err != nil {
		return fmt.Errorf("%w: writing the OCI bundle: %v", backend.ErrStart, err)
	}
	s.binds = bindSources(slotSpec(p, bundle, s.from, s.Slot))
	rootless := os.Geteuid() != 0
	nw := []string{"--network", "none"}
	if p.Config.AllowNetwork {
		nw = []string{"--network", "host"}
	}
	s.network = nw
	s.global = s.r.globalFlags(s.dir, "kill.log", rootless, nw)
	cmd := exec.Command(s.r.Path, append(s.r.globalFlags(s.dir, "runsc.log", rootless, nw), "run", "--bundle", bundle, s.id)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var ends [3][2]*os.File // stdin, stdout, stderr: the sandbox's end, ours
	for i := range ends {
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("%w: %v", backend.ErrStart, err)
		}
		if i == 0 {
			ends[i] = [2]*os.File{r, w}
		} else {
			ends[i] = [2]*os.File{w, r}
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0][0], ends[1][0], ends[2][0]
	s.config, s.stdout, s.stderr = ends[0][1], ends[1][1], ends[2][1]
	s.Born = time.Now()
	err := cmd.Start()
	for i := range ends {
		ends[i][0].Close()
	}
	if err != nil {
		return fmt.Errorf("%w: starting runsc: %v; %s", backend.ErrStart, err, Fix)
	}
	s.cmd = cmd
	go func() {
		s.err = cmd.Wait()
		close(s.exited)
	}()
	var b [1]byte
	if n, _ := io.ReadFull(s.stdout, b[:]); n != 1 || b[0] != poolReady {
		<-s.exited
		if cause := startFailure(filepath.Join(s.dir, "runsc.log")); cause != "" {
			return fmt.Errorf("%w: runsc could not start the sandbox here: %s; %s", backend.ErrStart, cause, Fix)
		}
		return fmt.Errorf("%w: the pre-started sandbox's waiting process did not start (a program that runs sandboxes must call run.ExecInitIfRequested first in main)", backend.ErrStart)
	}
	return nil
}

// Alive reports whether the sandbox still waits for its run.
func (s *Prestarted) Alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// take marks the sandbox used; false when it was used or closed before.
func (s *Prestarted) take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used || s.closed {
		return false
	}
	s.used = true
	return true
}

// Close ends the sandbox, its runsc processes and container, and removes
// its bundle and state; a run under way is killed. Close may be called
// more than once.
func (s *Prestarted) Close() error {
	s.mu.Lock()
	done := s.closed
	s.closed = true
	s.mu.Unlock()
	if done {
		return nil
	}
	if s.cmd != nil {
		s.r.kill(s.global, s.id, s.cmd.Process.Pid)
		<-s.exited
	}
	for _, f := range []*os.File{s.config, s.stdout, s.stderr} {
		if f != nil {
			f.Close()
		}
	}
	if s.u != nil {
		s.u.remove()
	}
	// The run's /tmp is a host folder here: folders its script locked
	// (mode 0) must not keep its files on the host.
	workdir.RemoveAll(s.dir)
	if _, err := os.Lstat(s.dir); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the pre-started sandbox's folder %s: %v", s.dir, err)
	}
	return nil
}

// Run runs p's script in the sandbox, as Runtime.Run does (the same
// outcome and errors, without serve: p has no host allowlist). started,
// when not nil, is called as Runtime.Run calls it, with runsc's pid and
// the host folder the sandbox has as /tmp, which holds the work folder
// (see poolSpec), before the script is handed over: the supervisor's
// watch follows the run from before its first instruction. The memory
// watch (watchMemory) holds the sandbox as an unpooled run's. Run
// returns once the script's sandbox has ended and its output is copied;
// the caller must then Close the sandbox (runsc's kill and delete, which
// may go on in the background). It fails with ErrPoolMismatch, nothing
// of the run started, when p's shape is not the sandbox's, a folder it
// binds was replaced since it started, or its /etc files could not be
// written (the sandbox is then spent), and with backend.ErrStart when
// the sandbox was used, closed or has died.
func (s *Prestarted) Run(ctx context.Context, p *backend.Spec, stdout, stderr io.Writer, wd *backend.Watchdog, started func(pid int, tmp string)) (*Outcome, error) {
	if s.runKey(p) != s.key || !sameBinds(s.binds) || !s.slotIs() {
		return nil, ErrPoolMismatch
	}
	if !s.take() {
		return nil, fmt.Errorf("%w: the pre-started sandbox was used or closed already", backend.ErrStart)
	}
	// Only once taken: a run that did not take the sandbox must not
	// write its /etc files into the one that did.
	if !s.writeRunEtc(p) {
		return nil, ErrPoolMismatch
	}
	if !s.Alive() {
		return nil, fmt.Errorf("%w: the pre-started sandbox has ended", backend.ErrStart)
	}
	begun := time.Now()
	pid := s.cmd.Process.Pid
	wd.Start(ctx, p.Timeout, func() { s.r.kill(s.global, s.id, pid) })
	if started != nil {
		started(pid, filepath.Join(s.dir, "bundle", poolTmp))
	}
	stop, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		s.r.watchMemory(s.r.globalFlags(s.dir, "events.log", os.Geteuid() != 0, s.network), s.id, memoryCap(p), sandboxCgroup(s.id, s.cgroupsPath), wd, stop)
	}()
	if err := s.handOver(p); err != nil {
		s.r.kill(s.global, s.id, pid)
		<-s.exited
		close(stop)
		<-watched
		wd.Finish()
		return nil, fmt.Errorf("%w: handing the run to the pre-started sandbox: %v", backend.ErrStart, err)
	}
	if err := s.waitGo(); err != nil {
		s.r.kill(s.global, s.id, pid)
		<-s.exited
		close(stop)
		<-watched
		wd.Finish()
		return nil, err
	}
	var copies sync.WaitGroup
	copies.Add(2)
	go func() { defer copies.Done(); io.Copy(stdout, s.stdout) }()
	go func() { defer copies.Done(); io.Copy(stderr, s.stderr) }()
	<-s.exited
	close(stop)
	<-watched
	o := &Outcome{Duration: time.Since(begun), Cgroup: os.Geteuid() == 0}
	wd.Finish()
	// runsc run destroys the sandbox as it exits, which closes the
	// output's pipes; should anything hold them still, the sandbox is
	// killed (Close does it again, off the run's path).
	copied := make(chan struct{})
	go func() { copies.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(time.Second):
		s.r.kill(s.global, s.id, pid)
		<-copied
	}
	if s.u != nil {
		// The sandbox's as a whole, its wait ahead included.
		o.CPUTime, o.PeakMemoryKB, _ = s.u.read()
	}
	if ended := wd.Ended(); ended != backend.EndNormal && ended != backend.EndExited {
		o.ExitCode, o.Signal = -1, "SIGKILL"
		return o, nil
	}
	o.ExitCode = exitCode(s.err)
	return o, nil
}

// waitGo reads the waiting process's poolGo: the script is about to
// start. Without it the error wraps backend.ErrStart with the waiting
// process's reason (its stderr): the script did not run.
func (s *Prestarted) waitGo() error {
	var b [1]byte
	if n, _ := io.ReadFull(s.stdout, b[:]); n == 1 && b[0] == poolGo {
		return nil
	}
	// Its reason is written before it exits; the pipe ends with the
	// sandbox, bounded all the same.
	s.stderr.SetReadDeadline(time.Now().Add(2 * time.Second))
	msg, _ := io.ReadAll(io.LimitReader(s.stderr, 4<<10))
	return fmt.Errorf("%w: the pre-started sandbox could not start the script: %s", backend.ErrStart, strings.TrimSpace(string(msg)))
}

// handOver writes p's config to the waiting process, then p's stdin in
// the background, closed at its end.
func (s *Prestarted) handOver(p *backend.Spec) error {
	c := &p.Config
	cfg := &poolConfig{Argv: c.Argv, Env: c.Env, Dir: c.Dir, Rlimits: rlimits(c.Limits), WorkDir: c.WorkDir}
	if c.Dir == "" {
		cfg.Dir = "/"
	}
	if err := writePoolConfig(s.config, cfg); err != nil {
		return err
	}
	go func() {
		if p.Stdin != nil {
			io.Copy(s.config, p.Stdin)
		}
		s.config.Close()
	}()
	return nil
}
