package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
)

const runUsage = `Usage:
    skill-sandbox run [flags] PATH SCRIPT [--] [ARGS...]
    skill-sandbox audit [flags] PATH SCRIPT [--] [ARGS...]

Run SCRIPT (a file in PATH/scripts/, e.g. "stats.py" or "scripts/stats.py")
of the skill folder PATH in the sandbox. The script's stdout and stderr stream
through; stdin is passed on when it is a pipe or a file, never a terminal.
Flags come before PATH; every word after SCRIPT is passed to the script (a
"--" right after SCRIPT is dropped).

"audit" runs the same way and writes one JSONL audit record (docs/audit.md)
as the last line of stderr, or appends it to --audit-log FILE. "run" writes a
record only with --audit-log. A record is written for every call that asks
for one, including refused, timed-out, killed and interrupted runs.

Exit status: the script's own status; 124 when it timed out; 128+N when it
was killed by signal N, or when skill-sandbox was interrupted by SIGINT (130)
or SIGTERM (143); 1 when the run was refused (invalid skill, bad script,
interpreter missing, isolation required but unavailable) or the audit record
could not be written; 2 on a usage error.

Flags:
`

// Exit statuses of run and audit besides the script's own.
const (
	exitRefused = 1
	exitUsage   = 2
	exitTimeout = 124
	exitSignal  = 128 // + signal number
)

// envFlags collects repeated --env KEY=VAL flags.
type envFlags map[string]string

func (e envFlags) String() string { return "" }

func (e envFlags) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VAL, got %q", kv)
	}
	e[k] = v
	return nil
}

// runFlags are the parsed flags of run and audit.
type runFlags struct {
	timeout          time.Duration
	memoryMB         int
	allowNetwork     bool
	env              envFlags
	workdir          bool
	keepWorkdir      bool
	workdirMB        int
	requireIsolation bool
	strict           bool
	outputCap        int
	auditLog         string
	quiet            bool
}

func newRunFlagSet(name string, f *runFlags, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.env = envFlags{}
	fs.DurationVar(&f.timeout, "timeout", run.DefaultTimeout, "wall-time limit; the whole process tree is killed when it passes")
	fs.IntVar(&f.memoryMB, "memory", run.DefaultMemoryMB, "address-space limit (RLIMIT_AS) in `MiB`")
	fs.BoolVar(&f.allowNetwork, "allow-network", false, "keep the host network (no network namespace, no Landlock TCP rules)")
	fs.Var(f.env, "env", "add `KEY=VAL` to the script's environment (repeatable)")
	fs.BoolVar(&f.workdir, "workdir", false, "run in a fresh per-run work folder instead of the skill's scripts/")
	fs.BoolVar(&f.keepWorkdir, "keep-workdir", false, "keep the work folder after the run and print its path on stderr")
	fs.IntVar(&f.workdirMB, "workdir-size", run.DefaultWorkDirMB, "size of the work folder in `MiB` (a private tmpfs; a kept work folder is on the host disk and not capped)")
	fs.BoolVar(&f.requireIsolation, "require-isolation", false, "refuse to run when a sandbox layer is unavailable")
	fs.BoolVar(&f.strict, "strict", false, "treat skill validation warnings as errors")
	fs.IntVar(&f.outputCap, "output-cap", run.DefaultOutputCap, "`BYTES` of stdout and of stderr each kept in memory (all output is still streamed, counted and hashed)")
	fs.StringVar(&f.auditLog, "audit-log", "", "append the audit record to `FILE` (one line, one write) instead of stderr")
	fs.BoolVar(&f.quiet, "quiet", false, "do not print a warning per missing sandbox layer")
	fs.Usage = func() {
		fmt.Fprint(stderr, runUsage)
		fs.PrintDefaults()
	}
	return fs
}

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// cmdRun implements "run" and, with wantAudit, "audit".
//
// Record policy: audit always writes exactly one record (to stderr, or to
// --audit-log); run writes one only when --audit-log was given. That holds
// for usage errors too, as far as the flags were parsed: a record with
// error_kind "usage" is written when the subcommand is audit or --audit-log
// was parsed before the mistake. Only -h/--help writes none.
func cmdRun(args []string, stdout, stderr io.Writer, wantAudit bool) int {
	name := "run"
	if wantAudit {
		name = "audit"
	}
	// Every byte bound for stderr passes through one lineEnd, so that the
	// record can start on a line of its own after a script whose stderr
	// does not end with a newline.
	le := &lineEnd{w: stderr}
	if sameFile(stdout, stderr) { // 2>&1: the script's stdout counts too
		stdout = &lineEnd{w: stdout, shared: le}
	}
	stderr = le
	// From the start, SIGINT/SIGTERM cancel the run and the record is still
	// written.
	ctx, interrupted, stop := interruptContext()
	defer stop()

	var f runFlags
	fs := newRunFlagSet(name, &f, stderr)
	c := call{name: name, stderr: stderr, lineEnd: le, meta: audit.Meta{ToolVersion: Version}}

	requestID, err := audit.NewRequestID()
	if err != nil {
		errorf(stderr, "%v", err)
		return exitRefused
	}
	c.meta.RequestID = requestID

	perr := fs.Parse(args)
	if errors.Is(perr, flag.ErrHelp) {
		return 0
	}
	c.auditLog, c.toStderr = f.auditLog, wantAudit && f.auditLog == ""
	c.meta.NetworkAllowed = f.allowNetwork
	// Out-of-range limits are left out of a usage-error record (it shows
	// the defaults); the error names the bad value.
	if f.memoryMB > 0 {
		c.meta.MemoryLimitMB = f.memoryMB
	}
	if f.timeout > 0 {
		c.meta.Timeout = f.timeout
	}
	if perr != nil {
		// flag has printed the error and the usage already.
		return c.usage(perr.Error(), false)
	}
	rest := fs.Args()
	if len(rest) >= 1 {
		c.meta.SkillPath = absPath(rest[0])
	}
	if len(rest) >= 2 {
		c.meta.Script = rest[1]
		c.meta.Args = rest[2:]
		if len(c.meta.Args) > 0 && c.meta.Args[0] == "--" {
			c.meta.Args = c.meta.Args[1:]
		}
	}
	switch {
	case len(rest) < 2:
		return c.usage("want PATH and SCRIPT", true)
	case rest[0] == "":
		return c.usage("PATH is empty", true)
	case f.timeout <= 0:
		return c.usage(fmt.Sprintf("--timeout must be positive, got %v", f.timeout), true)
	case f.memoryMB <= 0:
		return c.usage(fmt.Sprintf("--memory must be positive, got %d", f.memoryMB), true)
	case f.outputCap <= 0:
		return c.usage(fmt.Sprintf("--output-cap must be positive, got %d", f.outputCap), true)
	case f.workdirMB <= 0:
		return c.usage(fmt.Sprintf("--workdir-size must be positive, got %d", f.workdirMB), true)
	}

	// Open the log before running: a run whose record cannot be written
	// does not start.
	if c.auditLog != "" {
		if c.log, err = audit.OpenLog(c.auditLog); err != nil {
			errorf(stderr, "%v", err)
			return exitRefused
		}
		defer c.log.Close()
	}

	c.meta.SkillDigest, c.meta.DigestErr = audit.DigestDir(c.meta.SkillPath)

	var warnings io.Writer = stderr
	if f.quiet {
		warnings = nil
	}
	sb := &run.Sandbox{
		SkillDir:         c.meta.SkillPath,
		Env:              f.env,
		AllowNetwork:     f.allowNetwork,
		Timeout:          f.timeout,
		MemoryMB:         f.memoryMB,
		OutputCap:        f.outputCap,
		UseWorkDir:       f.workdir,
		KeepWorkDir:      f.keepWorkdir,
		WorkDirMB:        f.workdirMB,
		RequireIsolation: f.requireIsolation,
		Stdin:            scriptStdin(os.Stdin),
		Stdout:           stdout,
		Stderr:           stderr,
		Warnings:         warnings,
		RequestID:        requestID,
		Strict:           f.strict,
	}
	res, runErr := sb.Run(ctx, c.meta.Script, c.meta.Args)
	if res == nil {
		res = &run.Result{ExitCode: -1}
	}

	code := exitCode(res, runErr, interrupted())
	if runErr != nil {
		errorf(stderr, "%v", runErr)
	}
	if res.WorkDir != "" {
		fmt.Fprintf(stderr, "skill-sandbox: work folder kept: %s\n", res.WorkDir)
	}
	if err := c.write(audit.FromRun(c.meta, res, runErr)); err != nil {
		return exitRefused
	}
	return code
}

// call carries where the record of one call goes.
type call struct {
	name     string // "run" or "audit"
	stderr   io.Writer
	lineEnd  *lineEnd // stderr, tracking whether a line is open
	meta     audit.Meta
	auditLog string     // --audit-log FILE, or ""
	log      *audit.Log // auditLog once opened
	toStderr bool       // audit without --audit-log
}

// usage reports a usage error, writes its record if one was asked for and
// returns exit status 2. flag has already printed the usage unless
// printUsage is set.
func (c *call) usage(msg string, printUsage bool) int {
	if printUsage {
		errorf(c.stderr, "%s", msg)
		fmt.Fprintf(c.stderr, "Run \"skill-sandbox %s -h\" for usage.\n", c.name)
	}
	err := usageError{msg: msg}
	rec := audit.FromRun(c.meta, nil, err)
	rec.ErrorKind = audit.KindUsage
	rec.Message = "skill-sandbox: usage error: " + msg
	if err := c.write(rec); err != nil {
		return exitRefused
	}
	return exitUsage
}

// write writes the record where it was asked for (nowhere for run without
// --audit-log). The record goes to stderr as the last line only after Run
// has returned, that is after the script's stderr has been copied.
func (c *call) write(rec audit.Record) error {
	var err error
	switch {
	case c.log != nil:
		err = c.log.Append(rec)
	case c.auditLog != "":
		err = audit.Append(c.auditLog, rec)
	case c.toStderr:
		c.lineEnd.endLine()
		err = audit.Write(c.stderr, rec)
	default:
		return nil
	}
	if err != nil {
		errorf(c.stderr, "%v", err)
	}
	return err
}

// exitCode maps the outcome of a run to the exit status of skill-sandbox.
func exitCode(res *run.Result, err error, sig os.Signal) int {
	canceled := res.Canceled || errors.Is(err, context.Canceled)
	switch {
	case sig != nil && canceled:
		if n, ok := sig.(syscall.Signal); ok {
			return exitSignal + int(n)
		}
		return exitSignal + int(syscall.SIGTERM)
	case err != nil:
		return exitRefused
	case res.TimedOut:
		return exitTimeout
	case res.Signal != "":
		if n := signalNumber(res.Signal); n > 0 {
			return exitSignal + n
		}
		return exitSignal + int(syscall.SIGKILL)
	case res.ExitCode < 0:
		return exitRefused
	default:
		return res.ExitCode
	}
}

// absPath returns p made absolute, or p itself if that fails.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// lineEnd passes writes through to w and remembers whether the last byte
// written was a newline. Run writes the script's stderr from its own
// goroutines, hence the lock.
type lineEnd struct {
	mu     sync.Mutex
	w      io.Writer
	open   bool     // something was written and it did not end with '\n'
	shared *lineEnd // when set, the state is kept there (stdout and stderr are one file)
}

func (l *lineEnd) Write(p []byte) (int, error) {
	state := l
	if l.shared != nil {
		state = l.shared
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	n, err := l.w.Write(p)
	if n > 0 {
		state.open = p[n-1] != '\n'
	}
	return n, err
}

// sameFile reports whether a and b are the same open file, as with 2>&1.
func sameFile(a, b io.Writer) bool {
	fa, ok1 := a.(*os.File)
	fb, ok2 := b.(*os.File)
	if !ok1 || !ok2 {
		return false
	}
	sa, err1 := fa.Stat()
	sb, err2 := fb.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// endLine writes a newline if a line is open.
func (l *lineEnd) endLine() {
	l.mu.Lock()
	open := l.open
	l.mu.Unlock()
	if open {
		l.Write([]byte{'\n'})
	}
}

// scriptStdin returns what the script may read as its stdin: in when it is a
// pipe or a regular file, and nil (/dev/null) when it is a terminal or any
// other device, so that a script never holds a descriptor of the user's
// terminal (reading keystrokes, or injecting them with TIOCSTI).
func scriptStdin(in *os.File) io.Reader {
	st, err := in.Stat()
	if err != nil || st.Mode()&(os.ModeDevice|os.ModeCharDevice) != 0 {
		return nil
	}
	return in
}

// interruptContext returns a context canceled by SIGINT or SIGTERM (which
// makes Run kill the sandbox), a function that reports the first such
// signal (nil if none came), and a stop function that restores the default
// handling. SIGPIPE is caught as well, so that a closed stdout or stderr
// pipe (| head) gives write errors instead of killing skill-sandbox before
// its record is written. Caught signals are reset to their defaults in the
// script by execve.
func interruptContext() (context.Context, func() os.Signal, func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var first os.Signal
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if s == syscall.SIGPIPE {
					continue
				}
				mu.Lock()
				if first == nil {
					first = s
				}
				mu.Unlock()
				cancel()
			case <-done:
				return
			}
		}
	}()
	interrupted := func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
	stop := func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
	return ctx, interrupted, stop
}
