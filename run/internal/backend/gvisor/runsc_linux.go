package gvisor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/workdir"
)

// Fix is what to do when runsc is missing or cannot start here.
const Fix = "install gVisor (apt-get install runsc), or use --backend native"

// Runtime is a runsc found on this host.
type Runtime struct {
	Path    string // absolute path of runsc
	Version string // its version line, "runsc version ..."
}

// Find looks runsc up on PATH and asks its version. The error wraps
// backend.ErrUnsupported and says how to install it.
func Find() (*Runtime, error) {
	path, err := exec.LookPath("runsc")
	if err != nil {
		return nil, fmt.Errorf("%w: the gvisor backend needs runsc, which is not on PATH: %s", backend.ErrUnsupported, Fix)
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s --version failed (%v): %s", backend.ErrUnsupported, path, err, Fix)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return &Runtime{Path: path, Version: strings.TrimSpace(line)}, nil
}

// HostRootInSandbox is where runsc's gofer and Sentry (runsc 20221219)
// see the container's root, by which the links of their descriptors
// name the host's files: /root/tmp/out/f for the grant /tmp/out.
const HostRootInSandbox = "/root"

// Outcome is how a script run under runsc ended.
type Outcome struct {
	ExitCode int    // the script's exit status; -1 when killed
	Signal   string // "SIGKILL" when the watchdog killed it
	Duration time.Duration
	// Cgroup says runsc held the sandbox to the spec's memory, task and
	// CPU limits (root only: rootless runsc runs without a cgroup).
	Cgroup bool
	// CPUTime and PeakMemoryKB are the host's figures for the whole
	// sandbox (gVisor's kernel and gofer with the script), from a cgroup
	// the supervisor keeps around runsc's (root, cgroup v1); 0 when
	// unknown.
	CPUTime      time.Duration
	PeakMemoryKB int64
}

// Run runs p's script under runsc with stdout and stderr as its output
// streams; wd ends it on p.Timeout or ctx's end, and no process of the
// run outlives Run. With a host allowlist (p.Proxy), serve is handed the
// listener the sandbox's proxy port leads to, before the sandbox starts;
// it is not called otherwise. started, when not nil, is called with
// runsc's pid once it runs (the sandbox's processes on the host, the
// Sentry, the gofer and their stubs, are its descendants) and the host
// folder of the work folder, removed after Run unless it is kept. An error wraps backend.ErrStart when runsc
// could not start the sandbox (with runsc's reason and Fix), or the error
// of Check.
func (r *Runtime) Run(ctx context.Context, p *backend.Spec, stdout, stderr io.Writer, wd *backend.Watchdog, serve ServeFunc, started func(pid int, workDir string)) (*Outcome, error) {
	if err := Check(p); err != nil {
		return nil, err
	}
	dir, err := privateTempDir("skill-sandbox-gvisor-")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", backend.ErrStart, err)
	}
	defer workdir.RemoveAll(dir) // the work folder's host folder is in it
	bundle := filepath.Join(dir, "bundle")
	if err := os.Mkdir(bundle, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", backend.ErrStart, err)
	}
	nw, err := setupNetwork(p, dir, serve)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", backend.ErrStart, err)
	}
	defer nw.close()
	id := containerID(p.RequestID)
	var cgroupsPath string
	u := newUsage(id)
	if u != nil {
		defer u.remove()
		cgroupsPath = u.path()
	}
	if err := writeBundle(p, bundle, nw.relay, nw.dir, cgroupsPath); err != nil {
		return nil, fmt.Errorf("%w: writing the OCI bundle: %v", backend.ErrStart, err)
	}
	rootless := os.Geteuid() != 0
	global := r.globalFlags(dir, "runsc.log", rootless, nw.flags)
	// kill and delete log apart: a failure of theirs (the container
	// already gone) is no failure of the start.
	killFlags := r.globalFlags(dir, "kill.log", rootless, nw.flags)
	cmd := exec.Command(r.Path, append(global, "run", "--bundle", bundle, id)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.Stdin, stdout, stderr
	// Its own process group, killed as a whole at the end; and killed if
	// the supervisor dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	begun := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: starting runsc: %v; %s", backend.ErrStart, err, Fix)
	}
	wd.Start(ctx, p.Timeout, func() { r.kill(killFlags, id, cmd.Process.Pid) })
	if started != nil {
		started(cmd.Process.Pid, workSource(p, bundle))
	}
	stop, connected, watched := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(connected)
		nw.connect(stop)
	}()
	go func() {
		defer close(watched)
		r.watchMemory(r.globalFlags(dir, "events.log", rootless, nw.flags), id, memoryCap(p), sandboxCgroup(id, cgroupsPath), wd, stop)
	}()
	waitErr := cmd.Wait()
	close(stop)
	<-connected
	<-watched
	o := &Outcome{Duration: time.Since(begun), Cgroup: !rootless}
	wd.Finish()
	// Nothing of the run may outlive it: the sandbox, its gofer and any
	// runsc left are ended whatever happened.
	r.kill(killFlags, id, cmd.Process.Pid)
	if u != nil {
		// After runsc delete: every process of the sandbox is gone.
		o.CPUTime, o.PeakMemoryKB, _ = u.read()
	}
	// A run the watchdog ended may leave runsc's complaints in its log;
	// only one that ended by itself can have failed to start.
	ended := wd.Ended()
	if ended == backend.EndNormal || ended == backend.EndExited {
		if cause := startFailure(filepath.Join(dir, "runsc.log")); cause != "" {
			return nil, fmt.Errorf("%w: runsc could not start the sandbox here: %s; %s", backend.ErrStart, cause, Fix)
		}
		if !nw.relayStarted() {
			return nil, fmt.Errorf("%w: the network relay did not start in the sandbox (exit status %d; a program that runs sandboxes must call run.ExecInitIfRequested first in main); the script did not run", backend.ErrStart, exitCode(waitErr))
		}
		o.ExitCode = exitCode(waitErr)
		return o, nil
	}
	o.ExitCode, o.Signal = -1, "SIGKILL"
	return o, nil
}

// globalFlags are runsc's flags before the subcommand, the same for run,
// kill and delete but the log: the state folder and log in dir, the
// network's flags, and
// rootless without a cgroup when the supervisor is not root.
func (r *Runtime) globalFlags(dir, log string, rootless bool, network []string) []string {
	f := append([]string{"--root", filepath.Join(dir, "state"), "--log", filepath.Join(dir, log), "--log-format", "json", "--oci-seccomp"}, network...)
	if rootless {
		f = append(f, "--rootless", "--ignore-cgroups")
	}
	return f
}

// kill ends the container (runsc kill, then delete --force) and the
// process group of runsc. runsc's children (the sandbox, whose Sentry
// runs the script, and the gofer) are killed first: starting runsc kill
// takes some 100 ms and more, during which a script past a cap of the
// watch would go on writing (measured: 256 MiB past a 256 MiB cap).
func (r *Runtime) kill(global []string, id string, pgid int) {
	killChildren(pgid)
	exec.Command(r.Path, append(global, "kill", "--all", id, "KILL")...).Run()
	exec.Command(r.Path, append(global, "delete", "--force", id)...).Run()
	syscall.Kill(-pgid, syscall.SIGKILL)
}

// startFailure is runsc's own error, from its log, when it failed
// (errors are logged at level error); "" when it started the script.
func startFailure(log string) string {
	f, err := os.Open(log)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	sc.Buffer(nil, 64<<10)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte(`"level":"error"`)) {
			return logMessage(sc.Bytes())
		}
	}
	return ""
}

// exitCode is the script's exit status from runsc's wait error: runsc
// exits with the container's status.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// killChildren sends SIGKILL to the children of process pid: those /proc
// lists with pid as their parent. A child is not reaped, and its pid not
// reused, before its parent waits for it.
func killChildren(pid int) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	parent := strconv.Itoa(pid)
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := proc.StatFields(e.Name()); len(f) > 1 && f[1] == parent {
			syscall.Kill(child, syscall.SIGKILL)
		}
	}
}
