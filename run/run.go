package run

import (
	"context"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/native"
	"github.com/skill-sandbox/skill-sandbox/run/internal/plan"
	"os"
	"slices"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/artifacts"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
)

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

// prepare plans one run (plan.Request.Prepare) and copies what the
// planning learnt into res, as far as it got.
func (s *Sandbox) prepare(script string, args, command []string, res *Result) (*native.Launch, func(), error) {
	f := plan.Facts{Script: res.Script}
	l, cleanup, err := s.request().Prepare(script, args, command, &f)
	res.Skill, res.Script, res.Interpreter, res.Validation = f.Skill, f.Script, f.Interpreter, f.Validation
	res.Grants, res.made, res.WorkDir = Grants(f.Grants), f.Made, f.WorkDir
	return l, cleanup, err
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
		uid, gid := plan.SandboxIdentity()
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
