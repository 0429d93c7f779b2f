package audit

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/sign"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

// NewRequestID returns 128 random bits from the operating system's
// cryptographic random source (getrandom(2) on Linux, crypto/rand
// elsewhere) as 32 lowercase hex digits.
func NewRequestID() (string, error) {
	var b [16]byte
	if err := random.Read(b[:]); err != nil {
		return "", fmt.Errorf("request id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// FromRun builds the record of one call from what was asked (meta) and what
// run.Sandbox.Run returned. res may be nil (the call failed before Run, for
// example on a usage error; pass the error as err). The host, uid and pid
// fields describe the calling process.
func FromRun(meta Meta, res *run.Result, err error) Record {
	if res == nil {
		res = &run.Result{ExitCode: -1}
	}
	ts := meta.Time
	if ts.IsZero() {
		ts = time.Now()
	}
	host, _ := os.Hostname()
	rec := Record{
		SchemaVersion: SchemaVersion,
		Timestamp:     ts.UTC().Format(TimestampFormat),
		Event:         EventRun,
		RequestID:     meta.RequestID,
		Skill: Skill{
			Name:   firstNonEmpty(res.Skill, res.Validation.Name),
			Path:   meta.SkillPath,
			SHA256: meta.SkillDigest,
		},
		Script:          firstNonEmpty(res.Script, meta.Script),
		Interpreter:     nonNil(res.Interpreter),
		Args:            nonNil(meta.Args),
		Started:         res.Started,
		ExitCode:        res.ExitCode,
		Signal:          res.Signal,
		TimedOut:        res.TimedOut,
		Canceled:        res.Canceled,
		Duration:        millis(res.Duration),
		CPU:             millis(res.CPUTime),
		MaxRSSKB:        res.MaxRSSKB,
		PeakMemoryKB:    res.PeakMemoryKB,
		OOMKills:        res.OOMKills,
		Stdout:          stream(res.Stdout),
		Stderr:          stream(res.Stderr),
		NetworkAllowed:  meta.NetworkAllowed,
		Network:         network(meta, res),
		AddressSpaceMB:  res.AddressSpaceMB,
		MaxOutputBytes:  meta.MaxOutput,
		OutputExceeded:  res.OutputExceeded,
		LimitExceeded:   res.LimitExceeded,
		WorkDir:         res.WorkDir,
		SandboxUID:      res.SandboxUID,
		SharedQuotas:    sharedQuotas(res.SharedQuotas),
		Backend:         nonNative(res.Backend),
		BackendVersion:  res.BackendVersion,
		BackendFallback: res.BackendFallback,
		Layers:          layers(res),
		Validation:      validation(res.Validation),
		MCP:             meta.MCP,
		Serve:           meta.Serve,
		Grants:          grantsOf(meta.Grants, res.Grants),
		Artifacts:       artifactsOf(res.Artifacts),
		Signature:       meta.Signature,
		PolicySHA256:    meta.PolicySHA256,
		PolicySources:   meta.PolicySources,
		Environment:     environmentOf(meta.Environment),
		NodeEnvironment: environmentOf(meta.NodeEnvironment),
		Tool:            Tool{Name: ToolName, Version: meta.ToolVersion},
		Host:            host,
		UID:             os.Getuid(),
		PID:             os.Getpid(),
	}
	if meta.DigestErr != nil {
		rec.Skill.DigestError = meta.DigestErr.Error()
	}
	if len(meta.Policy) > MaxPolicyBytes {
		rec.PolicyTruncated = true
	} else if len(meta.Policy) > 0 {
		rec.Policy = json.RawMessage(meta.Policy)
	}
	// The run's own limits first: meta holds what the caller asked for,
	// which a library caller may leave unset.
	rec.MemoryLimitMB = firstPositive(res.MemoryLimitMB, meta.MemoryLimitMB, run.DefaultMemoryMB)
	rec.TimeoutMS = firstPositive(res.Timeout, meta.Timeout, run.DefaultTimeout).Milliseconds()
	if rec.RequestID == "" {
		// Every record carries a request id; a caller that made none gets
		// a fresh one (an all-zero id only if the system has no entropy).
		id, idErr := NewRequestID()
		if idErr != nil {
			id = strings.Repeat("0", 32)
		}
		rec.RequestID = id
	}
	if !res.Started && !res.Canceled && !res.TimedOut {
		rec.ExitCode = -1
	}
	if err != nil {
		rec.Error = err.Error()
		rec.ErrorKind = ErrorKind(err)
	}
	rec.Outcome = outcome(res, err)
	if meta.NoRun && err == nil && !res.Started {
		rec.Outcome = OutcomeNotRun
	}
	rec.Level = Level(rec)
	rec.Message = message(rec)
	return rec
}

// ErrorKind classifies an error returned by run.Sandbox.Run (or by the
// caller before it) into one of the Kind constants.
func ErrorKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, run.ErrInvalidSkill):
		return KindInvalidSkill
	case errors.Is(err, run.ErrBadScript):
		return KindBadScript
	case errors.Is(err, run.ErrNoInterpreter):
		return KindNoInterpreter
	case errors.Is(err, run.ErrIsolation):
		return KindIsolation
	case errors.Is(err, run.ErrBadConfig):
		return KindBadConfig
	case errors.Is(err, run.ErrUnsupported):
		return KindUnsupported
	case errors.Is(err, run.ErrStart):
		return KindStart
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindCanceled
	case errors.Is(err, sign.ErrNotVerified):
		return KindSignature
	case errors.As(err, new(*policy.Error)), errors.As(err, new(*policy.RefusedError)):
		return KindPolicy
	default:
		return KindInternal
	}
}

// Level returns the level of a record from its outcome:
//
//   - "error" when the call was refused or failed, timed out, was killed by
//     a signal or canceled;
//   - "warn" when the script exited with a non-zero status, or exited 0 with
//     isolation layers missing;
//   - "info" when the script exited 0 with every layer in force.
func Level(rec Record) string {
	switch {
	case rec.Outcome == OutcomeNotRun && rec.Error == "":
		return LevelInfo
	case rec.Outcome != OutcomeExited || rec.Error != "":
		return LevelError
	case rec.ExitCode != 0 || len(rec.Layers.Missing) > 0:
		return LevelWarn
	default:
		return LevelInfo
	}
}

func outcome(res *run.Result, err error) string {
	switch {
	case res.TimedOut:
		return OutcomeTimedOut
	case res.Canceled:
		return OutcomeCanceled
	case res.OutputExceeded != "" && res.Signal != "":
		return OutcomeOutputLimit
	case res.LimitExceeded != "":
		return OutcomeResourceLimit
	case res.Signal != "":
		return OutcomeKilled
	case err != nil && !res.Started && ErrorKind(err) == KindCanceled:
		return OutcomeCanceled
	case err != nil && ErrorKind(err) == KindStart:
		return OutcomeFailed
	case err != nil && !res.Started:
		return OutcomeRefused
	case err != nil:
		return OutcomeFailed
	case !res.Started:
		// No error and not started cannot come from Run; report it rather
		// than pretend the script ran.
		return OutcomeFailed
	default:
		return OutcomeExited
	}
}

func message(rec Record) string {
	who := rec.Skill.Name
	if who == "" {
		who = rec.Skill.Path
	}
	if who == "" {
		who = "(no skill)"
	}
	what := rec.Script
	if what == "" {
		what = "(no script)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "skill %s: %s ", who, what)
	switch rec.Outcome {
	case OutcomeExited:
		fmt.Fprintf(&b, "exited with status %d in %s", rec.ExitCode, fmtMillis(rec.Duration))
	case OutcomeTimedOut:
		fmt.Fprintf(&b, "timed out after %s", fmtMillis(float64(rec.TimeoutMS)))
	case OutcomeKilled:
		fmt.Fprintf(&b, "killed by %s after %s", rec.Signal, fmtMillis(rec.Duration))
	case OutcomeOutputLimit:
		fmt.Fprintf(&b, "killed after %s: %s passed the output limit of %d bytes", fmtMillis(rec.Duration), rec.OutputExceeded, rec.MaxOutputBytes)
	case OutcomeResourceLimit:
		fmt.Fprintf(&b, "killed after %s: %s", fmtMillis(rec.Duration), limitText(rec.LimitExceeded))
	case OutcomeCanceled:
		b.WriteString("canceled: the runner was interrupted")
	case OutcomeRefused:
		fmt.Fprintf(&b, "refused: %s", rec.Error)
	case OutcomeNotRun:
		b.WriteString("nothing to run")
	default:
		fmt.Fprintf(&b, "failed: %s", rec.Error)
	}
	if n := len(rec.Layers.Missing); n > 0 && rec.Outcome != OutcomeRefused {
		names := make([]string, n)
		for i, m := range rec.Layers.Missing {
			names[i] = m.Layer
		}
		fmt.Fprintf(&b, " (missing layers: %s)", strings.Join(names, ", "))
	}
	return truncate(b.String(), maxMessageBytes)
}

// limitText says which cap the watch found passed.
func limitText(limit string) string {
	switch limit {
	case run.LimitWorkDirBytes:
		return "the work folder on the host disk passed its size cap (--workdir-size)"
	case run.LimitWorkDirInodes:
		return "the work folder on the host disk passed its inode cap (64 per MiB of --workdir-size)"
	case run.LimitMemory:
		return "the run's processes passed the memory limit (--memory; held by the supervisor's watch: no cgroup, or gvisor)"
	case run.LimitWriteBytes:
		return "the write grants grew past their cap (--write-size)"
	}
	return "a resource limit was passed: " + limit
}

func fmtMillis(ms float64) string {
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Millisecond).String()
}

// millis converts d to milliseconds, rounded to the microsecond.
func millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

func stream(o run.Output) Stream {
	return Stream{Bytes: o.Bytes, SHA256: o.SHA256, Truncated: o.Truncated}
}

func layers(res *run.Result) Layers {
	l := Layers{Applied: make([]string, 0, len(res.Applied)), Missing: make([]MissingLayer, 0, len(res.Missing))}
	for _, a := range res.Applied {
		l.Applied = append(l.Applied, string(a))
	}
	for _, m := range res.Missing {
		l.Missing = append(l.Missing, MissingLayer{Layer: string(m.Layer), Reason: truncate(m.Reason, maxProblemBytes)})
	}
	return l
}

func validation(v validate.Result) Validation {
	return Validation{Valid: v.Valid, SpecValid: len(v.Errors) == 0 && len(v.SpecWarnings()) == 0,
		Errors: problems(v.Errors), Warnings: problems(v.Warnings)}
}

func problems(ps []validate.Problem) []string {
	out := make([]string, 0, min(len(ps), maxProblems))
	for i, p := range ps {
		if i == maxProblems {
			out = append(out, fmt.Sprintf("... and %d more", len(ps)-maxProblems))
			break
		}
		out = append(out, truncate(p.String(), maxProblemBytes))
	}
	return out
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// firstPositive returns the first of vs above zero, or zero.
func firstPositive[T int | time.Duration](vs ...T) T {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}

func sharedQuotas(qs []run.SharedQuota) []SharedQuota {
	var out []SharedQuota
	for _, q := range qs {
		out = append(out, SharedQuota{Counter: q.Counter, UID: q.UID, Bound: q.Bound, Budget: q.Budget})
	}
	return out
}

// nonNative is the record's backend: b, or "" for the native backend,
// whose records omit it.
func nonNative(b string) string {
	if b == run.BackendNative {
		return ""
	}
	return b
}

// environmentOf copies e with Installed cut to MaxEnvironmentPackages.
func environmentOf(e *Environment) *Environment {
	if e == nil {
		return nil
	}
	c := *e
	c.InstalledCount = len(e.Installed)
	if len(c.Installed) > MaxEnvironmentPackages {
		c.Installed = c.Installed[:MaxEnvironmentPackages]
	}
	return &c
}
