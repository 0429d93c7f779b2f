//go:build linux && (amd64 || arm64)

package gvisor

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// benchSpec is a run of argv of the fixed shape a pool would start
// ahead: the skill folder read-only, a read and a write grant (the
// workspace), as uid 65534.
func benchSpec(b *testing.B, argv ...string) *backend.Spec {
	base, err := os.MkdirTemp("", "gvisor-pool-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	for _, d := range []string{"skill", "read", "write"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	os.Chown(filepath.Join(base, "write"), 65534, 65534)
	p := &backend.Spec{UID: 65534, GID: 65534, RequestID: "bench", Timeout: time.Minute, DenyPaths: []string{}}
	c := &p.Config
	c.Argv, c.Env, c.Dir = argv, []string{"PATH=/usr/bin:/bin"}, filepath.Join(base, "skill")
	c.Skill, c.WorkDir, c.WorkDirMB = c.Dir, "/tmp/work", 64
	c.Grants = []stageconfig.GrantMount{{Path: filepath.Join(base, "read")}, {Path: filepath.Join(base, "write"), Write: true}}
	c.Limits.OpenFiles, c.Limits.CPUSeconds = 256, 30
	if os.Geteuid() != 0 {
		p.UID, p.GID = os.Geteuid(), os.Getegid()
	}
	return p
}

// benchSandbox is one sandbox of a phase benchmark: its bundle and
// runsc's state in dir.
type benchSandbox struct {
	r      *Runtime
	dir    string
	id     string
	global []string
}

func newBenchSandbox(b *testing.B, r *Runtime, p *backend.Spec, n int) *benchSandbox {
	dir, err := os.MkdirTemp("", "gvisor-pool-bench-sb-")
	if err != nil {
		b.Fatal(err)
	}
	bundle := filepath.Join(dir, "bundle")
	if err := os.Mkdir(bundle, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := writeBundle(p, bundle, "", "", ""); err != nil {
		b.Fatal(err)
	}
	s := &benchSandbox{r: r, dir: dir, id: "bench-" + strconv.Itoa(n), global: r.globalFlags(dir, "runsc.log", os.Geteuid() != 0, []string{"--network", "none"})}
	// A benchmark that fails half-way leaves nothing behind.
	b.Cleanup(func() { s.teardown(0) })
	return s
}

func (s *benchSandbox) cmd(args ...string) *exec.Cmd {
	c := exec.Command(s.r.Path, append(append([]string{}, s.global...), args...)...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return c
}

// run runs runsc with args, its stdio /dev/null: files, not pipes, as
// create and run --detach hand them on to the sandbox, which outlives
// the command (a pipe would never reach its end).
func (s *benchSandbox) run(b *testing.B, stdout *os.File, args ...string) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	c := s.cmd(args...)
	c.Stdin, c.Stdout, c.Stderr = null, null, null
	if stdout != nil {
		c.Stdout = stdout
	}
	if err := c.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "runsc.log"))
		b.Fatalf("runsc %v: %v: %s", args, err, startFailure(filepath.Join(s.dir, "runsc.log"))+" "+strconv.Itoa(len(log)))
	}
}

// teardown ends the sandbox as Run does after every run (pgid 0: no
// runsc process of the benchmark's is left to kill).
func (s *benchSandbox) teardown(pgid int) {
	if pgid > 0 {
		s.r.kill(s.global, s.id, pgid)
	} else {
		s.cmd("kill", "--all", s.id, "KILL").Run()
		s.cmd("delete", "--force", s.id).Run()
	}
	os.RemoveAll(s.dir)
}

// phases times the parts of one sandbox's life: ahead (what a pool
// could do before the call), call (what is left for the call) and
// teardown (after the call's result), each reported per op; only call
// is the benchmark's own time.
type phases struct{ ahead, teardown time.Duration }

func (ph *phases) report(b *testing.B) {
	b.ReportMetric(float64(ph.ahead.Milliseconds())/float64(b.N), "ahead-ms/op")
	b.ReportMetric(float64(ph.teardown.Milliseconds())/float64(b.N), "teardown-ms/op")
}

func (ph *phases) untimed(b *testing.B, d *time.Duration, f func()) {
	b.StopTimer()
	t := time.Now()
	f()
	*d += time.Since(t)
	b.StartTimer()
}

// BenchmarkGVisorPoolPhases measures what of a gVisor run's start a pool
// could do before the call (issue 37): "unpooled" is Run of /bin/true,
// the whole start; the others start a sandbox ahead (ahead-ms/op) and
// time only what is left once the call is known, the teardown apart
// (teardown-ms/op):
//
//   - create-start: runsc create ahead (the Sentry and gofer boot, the
//     process not yet started); runsc start and wait at the call;
//   - waiting: runsc run of a shell that waits on its stdin (a pipe of
//     the supervisor's) ahead; at the call one line on the pipe, the
//     shell executes /bin/true and runsc run exits with its status;
//   - exec: runsc run --detach of a sleeping process ahead; runsc exec
//     of /bin/true at the call.
func BenchmarkGVisorPoolPhases(b *testing.B) {
	path, err := exec.LookPath("runsc")
	if err != nil {
		b.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
	r := &Runtime{Path: path}
	b.Run("unpooled", func(b *testing.B) {
		p := benchSpec(b, "/bin/true")
		for b.Loop() {
			var out, errb bytes.Buffer
			o, err := r.Run(context.Background(), p, &out, &errb, backend.NewWatchdog(), nil, nil)
			if err != nil || o.ExitCode != 0 {
				b.Fatal(err, o, errb.String())
			}
		}
	})
	b.Run("create-start", func(b *testing.B) {
		p := benchSpec(b, "/bin/true")
		var ph phases
		for i := 0; b.Loop(); i++ {
			var s *benchSandbox
			var outR *os.File
			ph.untimed(b, &ph.ahead, func() {
				s = newBenchSandbox(b, r, p, i)
				var outW *os.File
				var err error
				if outR, outW, err = os.Pipe(); err != nil {
					b.Fatal(err)
				}
				s.run(b, outW, "create", "--bundle", filepath.Join(s.dir, "bundle"), s.id)
				outW.Close()
			})
			s.run(b, nil, "start", s.id)
			// The sandbox holds the pipe's write end (the process's
			// stdout) until it ends: runsc wait cannot tell the status
			// of a sandbox already gone.
			io.Copy(io.Discard, outR)
			outR.Close()
			ph.untimed(b, &ph.teardown, func() { s.teardown(0) })
		}
		ph.report(b)
	})
	b.Run("waiting", func(b *testing.B) {
		p := benchSpec(b, "/bin/sh", "-c", "echo ready; read x; exec /bin/true")
		var ph phases
		for i := 0; b.Loop(); i++ {
			var s *benchSandbox
			var c *exec.Cmd
			var in *os.File
			ph.untimed(b, &ph.ahead, func() {
				s = newBenchSandbox(b, r, p, i)
				c = s.cmd("run", "--bundle", filepath.Join(s.dir, "bundle"), s.id)
				var inR, outW *os.File
				var outR *os.File
				var err error
				if inR, in, err = os.Pipe(); err != nil {
					b.Fatal(err)
				}
				if outR, outW, err = os.Pipe(); err != nil {
					b.Fatal(err)
				}
				c.Stdin, c.Stdout = inR, outW
				if err := c.Start(); err != nil {
					b.Fatal(err)
				}
				inR.Close()
				outW.Close()
				if line, err := bufio.NewReader(outR).ReadString('\n'); err != nil || line != "ready\n" {
					b.Fatal(line, err)
				}
				outR.Close()
			})
			in.Write([]byte("go\n"))
			in.Close()
			if err := c.Wait(); err != nil {
				b.Fatal(err)
			}
			ph.untimed(b, &ph.teardown, func() { s.teardown(c.Process.Pid) })
		}
		ph.report(b)
	})
	b.Run("exec", func(b *testing.B) {
		p := benchSpec(b, "/bin/sleep", "1000")
		var ph phases
		for i := 0; b.Loop(); i++ {
			var s *benchSandbox
			ph.untimed(b, &ph.ahead, func() {
				s = newBenchSandbox(b, r, p, i)
				s.run(b, nil, "run", "--detach", "--bundle", filepath.Join(s.dir, "bundle"), s.id)
			})
			s.run(b, nil, "exec", "--user", strconv.Itoa(p.UID)+":"+strconv.Itoa(p.GID), s.id, "/bin/true")
			ph.untimed(b, &ph.teardown, func() { s.teardown(0) })
		}
		ph.report(b)
	})
}
