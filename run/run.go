package run

import (
	"context"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/native"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"github.com/skill-sandbox/skill-sandbox/run/internal/artifacts"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"github.com/skill-sandbox/skill-sandbox/validate"
)

// Memory allowances for interpreters that reserve address space up front.
const (
	// nodeReserveMB is added to RLIMIT_AS for node: V8 reserves a large
	// virtual range for its code space at start-up and aborts ("Failed to
	// reserve virtual memory for CodeRange") under 512 MiB of address space,
	// although it touches little of it. The heap itself is still held to
	// MemoryMB with --max-old-space-size.
	nodeReserveMB = 1024
)

// nobodyUID is identity.Nobody, the host identity of the sandbox when
// the caller is root; run's shorthand, as its grants and tests use it.
const nobodyUID = identity.Nobody

// Run validates the skill, resolves script inside its scripts/ folder and
// runs it with args in the sandbox described by s. It always returns a
// non-nil Result, filled as far as the run got. A script that exits non-zero
// or is killed is not an error; refusals are, wrapping ErrInvalidSkill,
// ErrBadScript, ErrNoInterpreter, ErrIsolation, ErrBadConfig or
// ErrUnsupported. Canceling ctx kills the whole sandbox; Run then returns
// with Result.Canceled set. Run returns as soon as the result is complete,
// before the sandbox's own teardown has finished: see Result.WaitCleanup.
func (s *Sandbox) Run(ctx context.Context, script string, args []string) (*Result, error) {
	res := &Result{ExitCode: -1, Script: script}
	return res, s.start(ctx, script, args, nil, res)
}

// start prepares and launches one run of a script (Run) or of a command
// line (Command), filling res. The teardown runs here only when the launch
// did not hand it to the background teardown.
func (s *Sandbox) start(ctx context.Context, script string, args, command []string, res *Result) error {
	res.MemoryLimitMB, res.Timeout = orDefault(s.MemoryMB, DefaultMemoryMB), s.Timeout
	if res.Timeout <= 0 {
		res.Timeout = DefaultTimeout
	}
	l, cleanup, err := s.prepare(script, args, command, res)
	if err != nil {
		if cleanup != nil {
			cleanup()
		}
		unmakeRefused(res)
		return err
	}
	l.SetTeardown(cleanup)
	if uid := l.Spec().UID; uid > 0 && uid != os.Geteuid() {
		res.SandboxUID = uid
	}
	err = launchListing(ctx, l, res)
	res.SharedQuotas = sharedQuotas(res)
	l.Teardown() // unless handed to the background teardown
	unmakeRefused(res)
	return err
}

// unmakeRefused removes the write folders a run created when its script
// never started: a refused run leaves nothing behind on the host, and
// nothing is listed as created.
func unmakeRefused(res *Result) {
	if res.Started {
		return
	}
	res.SandboxUID = 0
	grants.RemoveMade(res.made)
	res.made, res.Grants.Created = nil, nil
}

// launchListing launches l's plan and, when it has write grants or a kept
// work folder, lists in res.Artifacts what the run changed there.
func launchListing(ctx context.Context, l *native.Launch, res *Result) error {
	p := l.Spec()
	res.Backend = BackendNative
	if p.GVisor {
		res.Backend = BackendGVisor
	}
	if len(p.ArtifactRoots) == 0 {
		return launchOutcome(ctx, l, res)
	}
	before := artifacts.Take(p.ArtifactRoots)
	before.Settle()
	start := time.Now()
	err := launchOutcome(ctx, l, res)
	if res.Started {
		// A kept work folder is read on the host after the run as the
		// grants are: what in it leads elsewhere goes too.
		roots := res.Grants.Write
		if res.WorkDir != "" {
			roots = append(slices.Clip(roots), res.WorkDir)
		}
		neutralised, truncated := artifacts.Sweep(roots, p.SweepAutorun, p.Autorun, before, start, artifacts.MaxEntries)
		uid, gid := sandboxIdentity()
		grants.UnplantSymlinks(res.Grants.Write, start, uid, gid)
		res.Artifacts = listing(artifacts.Diff(before, artifacts.Take(p.ArtifactRoots)), neutralised, truncated)
	}
	return err
}

// launchOutcome launches l's plan with its backend and copies the
// outcome, as far as the launch got, into res.
func launchOutcome(ctx context.Context, l *native.Launch, res *Result) error {
	var out *backend.Outcome
	var err error
	switch p := l.Spec(); {
	case p.GVisor && p.GVisorFallback:
		var fellBack string
		out, fellBack, err = l.RunGVisorOrNative(ctx)
		if fellBack != "" {
			res.Backend, res.BackendFallback = BackendNative, fellBack
		}
	case p.GVisor:
		out = backend.NewOutcome()
		err = l.RunGVisor(ctx, out)
	default:
		out = backend.NewOutcome()
		err = l.Run(ctx, out)
	}
	res.setOutcome(out)
	return err
}

// setOutcome copies a launch's outcome into r.
func (r *Result) setOutcome(o *backend.Outcome) {
	r.Started, r.Applied, r.Missing = o.Started, o.Applied, o.Missing
	r.ExitCode, r.Signal, r.TimedOut, r.Canceled = o.ExitCode, o.Signal, o.TimedOut, o.Canceled
	r.LimitExceeded, r.OutputExceeded = o.LimitExceeded, o.OutputExceeded
	r.Duration, r.CPUTime, r.MaxRSSKB = o.Duration, o.CPUTime, o.MaxRSSKB
	r.PeakMemoryKB, r.OOMKills, r.AddressSpaceMB = o.PeakMemoryKB, o.OOMKills, o.AddressSpaceMB
	r.epollBudget = o.EpollBudget
	r.Stdout, r.Stderr = Output(o.Stdout), Output(o.Stderr)
	r.Network, r.BackendVersion, r.cleanup = o.Network, o.BackendVersion, o.Cleanup
}

// enabled is ls without the layers in disable, in ls's order. A run's
// namespaces and a pool's shape both come from it, so they compare equal
// exactly when a pooled init process fits the run.
func enabled(ls, disable []Layer) []Layer {
	var out []Layer
	for _, l := range ls {
		if !stageconfig.Has(disable, l) {
			out = append(out, l)
		}
	}
	return out
}

// validateSkill validates the skill folder into res and returns
// ErrInvalidSkill, with the problems, when it is not valid. Validation is
// lenient (validate.Options.Lenient): a skill is refused only for what
// makes a run unsafe or impossible; its departures from the letter of the
// specification are written to s.Warnings, one line each, and kept in
// res.Validation.Warnings. Strict refuses them too, as validate --strict.
func (s *Sandbox) validateSkill(skill string, res *Result) error {
	res.Validation = validate.Skill(skill, validate.Options{Strict: s.Strict, Lenient: true})
	res.Skill = res.Validation.Name
	if !res.Validation.Valid {
		return fmt.Errorf("%w: %s", ErrInvalidSkill, describeProblems(res.Validation))
	}
	if s.Warnings != nil {
		for _, p := range res.Validation.SpecWarnings() {
			fmt.Fprintf(s.Warnings, "skill-sandbox: warning: %s\n", validate.Visible(p.String()))
		}
	}
	return nil
}

// scriptRefusal is validate.ResolveScript's error without its leading
// "script refused: ", which ErrBadScript's text already says.
func scriptRefusal(err error) string {
	return strings.TrimPrefix(err.Error(), validate.ErrScriptRefused.Error()+": ")
}

// scriptArgv validates the skill, resolves script inside it (a bare name
// in scripts/, a path with a slash in the skill folder: see
// validate.ResolveScript) and returns the argv that runs it with args, and the RLIMIT_AS in
// MiB.
func (s *Sandbox) scriptArgv(uid, gid int, skill, script string, args []string, res *Result) ([]string, int, error) {
	if err := s.validateSkill(skill, res); err != nil {
		return nil, 0, err
	}

	target, err := validate.ResolveScript(skill, script)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %s", ErrBadScript, scriptRefusal(err))
	}
	if rel, err := filepath.Rel(skill, target); err == nil {
		res.Script = filepath.ToSlash(rel)
	}
	memoryMB := orDefault(s.MemoryMB, DefaultMemoryMB)
	argv, asMB, err := scriptCommand(target, args, memoryMB, s.searchPath())
	if err != nil {
		return nil, 0, err
	}
	res.Interpreter = argv[:len(argv)-len(args)-1]

	// An unreachable skill folder is returned with the argv: grants.HandOver
	// may still solve it.
	return argv, asMB, checkReachable(uid, gid, skill, target, argv[0])
}

// checkNumbers refuses negative limits.
func (s *Sandbox) checkNumbers() error {
	for name, v := range map[string]int{
		"MemoryMB": s.MemoryMB, "MaxProcs": s.MaxProcs, "MaxFileMB": s.MaxFileMB,
		"MaxOpenFiles": s.MaxOpenFiles, "OutputCap": s.OutputCap, "WorkDirMB": s.WorkDirMB,
		"WriteMB": s.WriteMB,
	} {
		if v < 0 {
			return fmt.Errorf("%w: %s is negative (%d)", ErrBadConfig, name, v)
		}
	}
	if s.MaxOutput < 0 {
		return fmt.Errorf("%w: MaxOutput is negative (%d)", ErrBadConfig, s.MaxOutput)
	}
	if s.CPUs < 0 || s.CPUs != s.CPUs {
		return fmt.Errorf("%w: CPUs is negative or not a number (%v)", ErrBadConfig, s.CPUs)
	}
	if s.Timeout < 0 {
		return fmt.Errorf("%w: Timeout is negative (%s)", ErrBadConfig, s.Timeout)
	}
	return nil
}

func knownLayer(l Layer) bool { return stageconfig.Has(backend.AllLayers(false), l) }

// hostGuards returns the missing layers that guard the host (backend.GuardsHost).
func hostGuards(missing []Missing) []Missing {
	var out []Missing
	for _, m := range missing {
		if backend.GuardsHost(m.Layer) {
			out = append(out, m)
		}
	}
	return out
}

// commandLine builds the script's argv: the interpreter resolved on the
// sandbox PATH, its shebang arguments, the script and the caller's args. It
// also returns the RLIMIT_AS to use in MiB (see nodeReserveMB).
func commandLine(interp validate.Interpreter, script string, args []string, memoryMB int, path string) ([]string, int, error) {
	asMB := memoryMB
	if interp.Program == "" {
		return append([]string{script}, args...), asMB, nil
	}
	prog, err := lookPath(interp.Program, path)
	if err != nil {
		return nil, 0, err
	}
	argv := append([]string{prog}, interp.Args...)
	if base := filepath.Base(prog); base == "node" || base == "nodejs" {
		asMB += nodeReserveMB
		argv = append(argv, fmt.Sprintf("--max-old-space-size=%d", memoryMB))
	}
	argv = append(argv, script)
	return append(argv, args...), asMB, nil
}

// lookPath finds prog on path, the sandbox's PATH (or checks an absolute
// shebang path) and returns its absolute path.
func lookPath(prog, path string) (string, error) {
	if strings.ContainsRune(prog, '/') {
		if !filepath.IsAbs(prog) {
			return "", fmt.Errorf("%w: relative interpreter path %q", ErrNoInterpreter, prog)
		}
		if isExecutable(prog) {
			return prog, nil
		}
		return "", fmt.Errorf("%w: %s is not an executable file", ErrNoInterpreter, prog)
	}
	for _, dir := range filepath.SplitList(path) {
		if p := filepath.Join(dir, prog); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not installed in %s", ErrNoInterpreter, prog, path)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// describeProblems summarises validation errors for an error message.
func describeProblems(r validate.Result) string {
	var parts []string
	for _, p := range r.Errors {
		parts = append(parts, p.String())
	}
	if len(parts) == 0 {
		for _, p := range r.Warnings {
			parts = append(parts, p.String())
		}
	}
	if len(parts) == 0 {
		return "validation failed"
	}
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("and %d more", len(parts)-3))
	}
	return strings.Join(parts, "; ")
}

// newRequestID returns 128 random bits in hex.
func newRequestID() string { return random.ID() }

// cpuSeconds is the RLIMIT_CPU of a run: the asked limit, else one second
// more than the wall-time limit (a single-threaded script cannot use more).
func cpuSeconds(asked int, timeout time.Duration) uint64 {
	if asked > 0 {
		return uint64(asked)
	}
	return uint64(timeout.Seconds()) + 1
}
