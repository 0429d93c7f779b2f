package audit

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/sign"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

// Constants of the record schema.
const (
	// SchemaVersion is the value of every record's schema_version field. It
	// changes only when a field is removed or changes meaning; added fields
	// keep the version.
	SchemaVersion = "4"

	// EventRun is the event field of the record of one run or audit call.
	EventRun = "skill.run"

	// ToolName is the tool.name field.
	ToolName = "skill-sandbox"

	// MaxLineBytes bounds one marshalled record including its newline.
	// MarshalLine shortens args (and, if that is not enough, other free-form
	// strings) so that no line is longer.
	MaxLineBytes = 64<<10 - 1

	// TimestampFormat is the layout of the timestamp field: UTC, RFC 3339
	// with a fixed nine-digit fraction so that lines sort as text.
	TimestampFormat = "2006-01-02T15:04:05.000000000Z"
)

// Levels of a record. See Level for when each is used.
const (
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
)

// Outcomes of a call, the outcome field.
const (
	OutcomeExited   = "exited"    // the script ran and exited by itself (any status)
	OutcomeTimedOut = "timed_out" // killed because the wall-time limit passed
	OutcomeKilled   = "killed"    // killed by a signal it did not handle
	OutcomeCanceled = "canceled"  // stopped because the runner was interrupted
	OutcomeRefused  = "refused"   // never started: invalid skill, bad script, ...
	OutcomeFailed   = "failed"    // the sandbox or the runner failed, at or after the start
	// OutcomeOutputLimit: killed because stdout or stderr passed
	// --max-output (version 2); output_exceeded names the stream.
	OutcomeOutputLimit = "output_limit"
	// OutcomeResourceLimit: killed by the supervisor's watch for passing
	// a cap the kernel could not keep in this run (version 2);
	// limit_exceeded names it.
	OutcomeResourceLimit = "resource_limit"
)

// Error kinds, the error_kind field of a record with an error.
const (
	KindUsage         = "usage"          // the command line was wrong
	KindInvalidSkill  = "invalid_skill"  // run.ErrInvalidSkill
	KindBadScript     = "bad_script"     // run.ErrBadScript
	KindNoInterpreter = "no_interpreter" // run.ErrNoInterpreter
	KindIsolation     = "isolation"      // run.ErrIsolation
	KindBadConfig     = "bad_config"     // run.ErrBadConfig
	KindUnsupported   = "unsupported"    // run.ErrUnsupported
	KindStart         = "start_failed"   // run.ErrStart: the init stage or execve failed
	KindCanceled      = "canceled"       // the context was canceled before the run
	KindSignature     = "signature"      // sign.ErrNotVerified: --require-signature refused the skill
	KindPolicy        = "policy"         // a policy file is invalid, or the skill asks for more than is granted
	KindInternal      = "internal"       // anything else
)

// Size caps applied to free-form strings before marshalling, in bytes.
const (
	maxArgs          = 1024
	maxArgBytes      = 16 << 10
	maxPathBytes     = 4 << 10
	maxErrorBytes    = 4 << 10
	maxMessageBytes  = 1 << 10
	maxNameBytes     = 256
	maxProblems      = 32
	maxProblemBytes  = 1 << 10
	maxInterpreter   = 8
	shortStringBytes = 256 // last resort, see fit
)

// Record is one audit record: the JSON object written as one line per call.
// docs/audit.md documents every field; Schema returns its JSON Schema.
type Record struct {
	SchemaVersion string `json:"schema_version"`
	// Timestamp is when the record was made (the end of the call), in
	// TimestampFormat.
	Timestamp string `json:"timestamp"`
	// Level is "info", "warn" or "error"; see Level.
	Level string `json:"level"`
	// Message is a human one-liner summarising the call.
	Message   string `json:"message"`
	Event     string `json:"event"`
	Outcome   string `json:"outcome"`
	RequestID string `json:"request_id"`

	Skill       Skill    `json:"skill"`
	Script      string   `json:"script"`
	Interpreter []string `json:"interpreter"`
	Args        []string `json:"args"`
	// ArgsTruncated is set when args were cut to keep the line under
	// MaxLineBytes.
	ArgsTruncated bool `json:"args_truncated"`

	Started  bool    `json:"started"`
	ExitCode int     `json:"exit_code"`
	Signal   string  `json:"signal"`
	TimedOut bool    `json:"timed_out"`
	Canceled bool    `json:"canceled"`
	Duration float64 `json:"duration_ms"`
	CPU      float64 `json:"cpu_ms"`
	MaxRSSKB int64   `json:"max_rss_kb"`
	// PeakMemoryKB is the run's cgroup's peak memory charge (version 2);
	// 0 without the cgroup layer.
	PeakMemoryKB int64 `json:"peak_memory_kb"`
	// OOMKills counts processes killed by the cgroup's memory limit
	// (version 2).
	OOMKills int    `json:"oom_kills"`
	Stdout   Stream `json:"stdout"`
	Stderr   Stream `json:"stderr"`

	NetworkAllowed bool `json:"network_allowed"`
	// Network is the run's network: mode, host lists and the proxy's
	// connections (schema version 2).
	Network       Network `json:"network"`
	MemoryLimitMB int     `json:"memory_limit_mb"`
	// AddressSpaceMB is the RLIMIT_AS really applied: MemoryLimitMB plus
	// an allowance for interpreters that reserve address space up front
	// (node); 0 when the script was not started.
	AddressSpaceMB int   `json:"address_space_mb"`
	TimeoutMS      int64 `json:"timeout_ms"`
	// MaxOutputBytes is --max-output, the bytes streamed per stream at
	// most; 0 for no limit (version 2).
	MaxOutputBytes int64 `json:"max_output_bytes"`
	// OutputExceeded is "stdout" or "stderr" when that stream passed
	// MaxOutputBytes, else "" (version 2).
	OutputExceeded string `json:"output_exceeded"`
	// LimitExceeded is set when the supervisor's watch killed the run:
	// "workdir_bytes" or "workdir_inodes" (a work folder on the host disk
	// passed its cap), "memory" (the processes passed memory_limit_mb
	// without a cgroup), "write_bytes" (the write grants grew by more
	// than --write-size or the policy's write_mb allow); else "" (version 2).
	LimitExceeded string `json:"limit_exceeded"`
	WorkDir       string `json:"workdir,omitempty"`
	// SandboxUID is the host uid the script ran as when it was not the
	// caller's (run.Result.SandboxUID): a root caller's run's own id;
	// omitted as 0 otherwise (added within version 4).
	SandboxUID int `json:"sandbox_uid,omitempty"`

	// Grants are the file grants; Artifacts what the run changed under
	// them (docs/grants.md). Added in version 2.
	Grants    Grants    `json:"grants"`
	Artifacts Artifacts `json:"artifacts"`

	Layers     Layers     `json:"layers"`
	Validation Validation `json:"validation"`
	Signature  Signature  `json:"signature"`

	Error     string `json:"error,omitempty"`
	ErrorKind string `json:"error_kind,omitempty"`

	// MCP identifies the MCP tool call behind the record; absent for
	// command-line calls (schema version 2).
	MCP *MCP `json:"mcp,omitempty"`

	// Policy is the resolved policy of the run (docs/policy.md) as its
	// canonical JSON; absent when the call failed before the policy was
	// resolved, or when it is longer than MaxPolicyBytes (PolicyTruncated
	// is then set and PolicySHA256 still identifies it). Schema version 2.
	Policy          json.RawMessage `json:"policy,omitempty"`
	PolicySHA256    string          `json:"policy_sha256,omitempty"`
	PolicyTruncated bool            `json:"policy_truncated,omitempty"`
	// PolicySources are the policy files that went into Policy.
	PolicySources []PolicySource `json:"policy_sources,omitempty"`

	Tool Tool   `json:"tool"`
	Host string `json:"host"`
	UID  int    `json:"uid"`
	PID  int    `json:"pid"`
}

// Skill identifies the skill folder of a call.
type Skill struct {
	Name string `json:"name"`
	Path string `json:"path"`
	// SHA256 is DigestDir of the folder, taken before the run; "" when it
	// could not be computed, with the reason in DigestError.
	SHA256      string `json:"sha256"`
	DigestError string `json:"digest_error,omitempty"`
}

// Stream describes one output stream of the script without its content.
type Stream struct {
	Bytes     int64  `json:"bytes"`
	SHA256    string `json:"sha256"`
	Truncated bool   `json:"truncated"`
}

// Layers lists the isolation layers in force and those that were missing.
type Layers struct {
	Applied []string       `json:"applied"`
	Missing []MissingLayer `json:"missing"`
}

// MissingLayer is a layer that could not be applied, and why.
type MissingLayer struct {
	Layer  string `json:"layer"`
	Reason string `json:"reason"`
}

// Validation summarises the validation of the skill before the run.
type Validation struct {
	// Valid says the skill was accepted for the run: lenient validation
	// (validate.Options.Lenient) found nothing that makes a run unsafe or
	// impossible, and, under strict, no warning.
	Valid bool `json:"valid"`
	// SpecValid says the skill also passes validate, the specification's
	// verdict (no departures among the warnings). Schema version 3.
	SpecValid bool     `json:"spec_valid"`
	Errors    []string `json:"errors"`
	Warnings  []string `json:"warnings"`
}

// Signature is the outcome of the skill signature check of a call.
type Signature struct {
	// Required is set when the call required a good signature
	// (--require-signature); such a call never runs an unverified skill.
	Required bool `json:"required"`
	// Verified is set when the skill's signature verified.
	Verified bool `json:"verified"`
	// Principal, Fingerprint and KeyType describe the signer (see
	// sign.Signer); empty unless Verified.
	Principal   string `json:"principal"`
	Fingerprint string `json:"fingerprint"`
	KeyType     string `json:"key_type"`
}

// SignatureOf returns the record's signature field for a verified signer.
func SignatureOf(required bool, s *sign.Signer) Signature {
	if s == nil {
		return Signature{Required: required}
	}
	return Signature{Required: required, Verified: true, Principal: s.Principal, Fingerprint: s.Fingerprint, KeyType: s.KeyType}
}

// Tool names the program that wrote the record.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// PolicySource is one policy file behind a record's policy: the operator
// policy (--policy) or the skill's request file.
type PolicySource struct {
	Role string `json:"role"` // "operator" or "request"
	Path string `json:"path"`
}

// MaxPolicyBytes bounds the policy kept in a record; a longer one is left
// out (its hash stays) so that the record keeps under MaxLineBytes.
const MaxPolicyBytes = 16 << 10

// MCP describes the MCP tool call a record belongs to.
type MCP struct {
	// RequestID is the JSON-RPC id of the tools/call request, as its JSON
	// text (a number, or a string with its quotes).
	RequestID string `json:"request_id"`
	// Client is the client's name from initialize (clientInfo.name) or
	// from the request's _meta; "" when the client gave none.
	Client string `json:"client"`
	// Tool is the MCP tool called, e.g. "run_skill_script".
	Tool string `json:"tool"`
}

// Meta is what a call asked for, known before the run. FromRun combines it
// with the run's outcome.
type Meta struct {
	RequestID string
	// SkillPath is the skill folder as given; callers should make it
	// absolute.
	SkillPath string
	// SkillDigest is DigestDir(SkillPath), or "" with DigestErr set.
	SkillDigest string
	DigestErr   error
	// Script is the script as given on the command line; the record uses
	// the resolved path from run.Result when there is one.
	Script string
	Args   []string

	NetworkAllowed bool
	// Grants are the file grants asked for (absolute paths); the record
	// shows the run's resolved grants when it got that far.
	Grants run.Grants
	// Signature is the signature check done before the run.
	Signature Signature
	// AllowHosts and DenyHosts are the host allowlist asked for.
	AllowHosts, DenyHosts []string
	// MemoryLimitMB and Timeout are the limits asked for; zero means the
	// run package's default, which the record shows.
	MemoryLimitMB int
	Timeout       time.Duration
	// MaxOutput is the run's Sandbox.MaxOutput (0: no limit).
	MaxOutput int64

	ToolVersion string
	// MCP, when set, is copied to the record's mcp field.
	MCP *MCP
	// Policy is the canonical JSON of the resolved policy and PolicySHA256
	// its hash (policy.Resolved.Encode); nil when none was
	// resolved. PolicySources are the files behind it.
	Policy        []byte
	PolicySHA256  string
	PolicySources []PolicySource
	// Time is the record's timestamp; zero means time.Now().
	Time time.Time
}

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
		Script:         firstNonEmpty(res.Script, meta.Script),
		Interpreter:    nonNil(res.Interpreter),
		Args:           nonNil(meta.Args),
		Started:        res.Started,
		ExitCode:       res.ExitCode,
		Signal:         res.Signal,
		TimedOut:       res.TimedOut,
		Canceled:       res.Canceled,
		Duration:       millis(res.Duration),
		CPU:            millis(res.CPUTime),
		MaxRSSKB:       res.MaxRSSKB,
		PeakMemoryKB:   res.PeakMemoryKB,
		OOMKills:       res.OOMKills,
		Stdout:         stream(res.Stdout),
		Stderr:         stream(res.Stderr),
		NetworkAllowed: meta.NetworkAllowed,
		Network:        network(meta, res),
		AddressSpaceMB: res.AddressSpaceMB,
		MaxOutputBytes: meta.MaxOutput,
		OutputExceeded: res.OutputExceeded,
		LimitExceeded:  res.LimitExceeded,
		WorkDir:        res.WorkDir,
		SandboxUID:     res.SandboxUID,
		Layers:         layers(res),
		Validation:     validation(res.Validation),
		MCP:            meta.MCP,
		Grants:         grantsOf(meta.Grants, res.Grants),
		Artifacts:      artifactsOf(res.Artifacts),
		Signature:      meta.Signature,
		PolicySHA256:   meta.PolicySHA256,
		PolicySources:  meta.PolicySources,
		Tool:           Tool{Name: ToolName, Version: meta.ToolVersion},
		Host:           host,
		UID:            os.Getuid(),
		PID:            os.Getpid(),
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
		return "the run's processes passed the memory limit (--memory; no cgroup)"
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

// MarshalLine returns the record as one line of JSON ending in "\n", at
// most MaxLineBytes long. Long free-form fields are cut first (see
// docs/audit.md); if the line is still too long, trailing args are dropped
// and args_truncated is set. HTML characters are not escaped. Fields that
// are not valid UTF-8 (file names in another encoding) are written with
// their stray bytes as \xNN and backslashes doubled, never as U+FFFD.
func (r Record) MarshalLine() ([]byte, error) {
	if len(r.Layers.Missing) > 0 { // escapeNames writes to it: a copy
		r.Layers.Missing = append([]MissingLayer(nil), r.Layers.Missing...)
	}
	r.escapeNames()
	r.capFields()
	line, err := marshal(r)
	if err != nil || len(line) <= MaxLineBytes {
		return line, err
	}
	// Too long: first list fewer connections (the totals keep counting
	// them), then keep as many leading args as fit.
	for len(line) > MaxLineBytes && len(r.Network.Connections) > 0 {
		r.Network.Connections = r.Network.Connections[:len(r.Network.Connections)/2]
		r.Network.ConnectionsTruncated = true
		if line, err = marshal(r); err != nil {
			return nil, err
		}
	}
	if len(line) <= MaxLineBytes {
		return line, nil
	}
	// Too long: keep as many leading args as fit in what the rest leaves.
	args := r.Args
	r.Args = []string{}
	base, err := marshal(r)
	if err != nil {
		return nil, err
	}
	if len(base) > MaxLineBytes {
		// Only escaping-heavy paths or messages get here: shorten them all.
		r.shorten()
		if base, err = marshal(r); err != nil {
			return nil, err
		}
	}
	budget := MaxLineBytes - len(base)
	kept := make([]string, 0, len(args))
	for _, a := range args {
		enc, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		cost := len(enc) + 1 // the comma
		if cost > budget {
			break
		}
		budget -= cost
		kept = append(kept, a)
	}
	r.Args = kept
	r.ArgsTruncated = r.ArgsTruncated || len(kept) < len(args)
	return marshal(r)
}

// capFields applies the per-field size caps.
func (r *Record) capFields() {
	r.capGrants(maxGrantPaths, maxArtifactFiles, maxGrantPathLen)
	r.Message = truncate(r.Message, maxMessageBytes)
	r.Skill.Name = truncate(r.Skill.Name, maxNameBytes)
	r.Signature.Principal = truncate(r.Signature.Principal, maxNameBytes)
	r.Skill.Path = truncate(r.Skill.Path, maxPathBytes)
	r.Skill.DigestError = truncate(r.Skill.DigestError, maxErrorBytes)
	r.Script = truncate(r.Script, maxPathBytes)
	r.WorkDir = truncate(r.WorkDir, maxPathBytes)
	r.PolicySources = capSources(r.PolicySources, maxPathBytes)
	r.Error = truncate(r.Error, maxErrorBytes)
	r.Host = truncate(r.Host, maxNameBytes)
	r.Tool.Version = truncate(r.Tool.Version, maxNameBytes)
	if r.MCP != nil {
		m := *r.MCP // a copy: the caller's value is not touched
		m.RequestID = truncate(m.RequestID, maxNameBytes)
		m.Client = truncate(m.Client, maxNameBytes)
		m.Tool = truncate(m.Tool, maxNameBytes)
		r.MCP = &m
	}
	if len(r.Interpreter) > maxInterpreter {
		r.Interpreter = r.Interpreter[:maxInterpreter]
	}
	r.Interpreter = truncateAll(r.Interpreter, maxPathBytes)
	if len(r.Args) > maxArgs {
		r.Args = r.Args[:maxArgs]
		r.ArgsTruncated = true
	}
	for _, a := range r.Args {
		if len(a) > maxArgBytes {
			r.ArgsTruncated = true
			break
		}
	}
	r.Args = truncateAll(r.Args, maxArgBytes) // a copy: the caller's slice is not touched
	r.Network.capNetwork()
}

// shorten cuts every free-form field to shortStringBytes; the last resort
// of MarshalLine.
func (r *Record) shorten() {
	r.capGrants(shortGrantPaths, shortGrantPaths, shortStringBytes)
	r.Message = truncate(r.Message, shortStringBytes)
	r.Skill.Path = truncate(r.Skill.Path, shortStringBytes)
	r.Signature.Principal = truncate(r.Signature.Principal, shortStringBytes)
	r.Skill.DigestError = truncate(r.Skill.DigestError, shortStringBytes)
	r.Script = truncate(r.Script, shortStringBytes)
	r.WorkDir = truncate(r.WorkDir, shortStringBytes)
	r.PolicySources = capSources(r.PolicySources, shortStringBytes)
	r.Error = truncate(r.Error, shortStringBytes)
	r.Interpreter = truncateAll(r.Interpreter, shortStringBytes)
	r.Validation.Errors = truncateAll(r.Validation.Errors, shortStringBytes)
	r.Validation.Warnings = truncateAll(r.Validation.Warnings, shortStringBytes)
	missing := make([]MissingLayer, len(r.Layers.Missing))
	for i, m := range r.Layers.Missing {
		missing[i] = MissingLayer{Layer: m.Layer, Reason: truncate(m.Reason, shortStringBytes)}
	}
	r.Layers.Missing = missing
}

// marshal returns the line of r: its JSON object (see appendRecord) and a
// newline.
func marshal(r Record) ([]byte, error) {
	line, err := appendRecord(make([]byte, 0, 2048), &r)
	if err != nil {
		return nil, fmt.Errorf("audit record: %w", err)
	}
	return escapeC1(append(line, '\n')), nil
}

// escapeC1 writes DEL and the C1 controls (U+007F-U+009F), which JSON
// encoding leaves raw (appendString as encoding/json), as \u escapes: the
// record of audit goes to the caller's stderr, often a terminal, and a
// name from the skill holding U+009B (CSI) or U+009D (OSC) would reach it
// as a control sequence. They can only occur inside JSON strings, where
// the escape decodes to the same character.
func escapeC1(line []byte) []byte {
	if !bytes.ContainsFunc(line, func(r rune) bool { return r >= 0x7f && r <= 0x9f }) {
		return line
	}
	out := make([]byte, 0, len(line)+16)
	for _, r := range string(line) {
		if r >= 0x7f && r <= 0x9f {
			out = fmt.Appendf(out, `\u%04x`, r)
		} else {
			out = utf8.AppendRune(out, r)
		}
	}
	return out
}

// Write writes the record as one line to w with a single Write call. Use it
// for streams such as stderr; use Append for a file that concurrent runs
// share.
func Write(w io.Writer, rec Record) error {
	line, err := rec.MarshalLine()
	if err != nil {
		return err
	}
	return writeLine(w, line)
}

// writeLine writes one marshalled record to w.
func writeLine(w io.Writer, line []byte) error {
	if _, err := w.Write(line); err != nil {
		return fmt.Errorf("writing audit record: %w", err)
	}
	return nil
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence,
// marking the cut with "...".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "..."
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

func truncateAll(ss []string, n int) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = truncate(s, n)
	}
	return out
}

// capSources returns a copy of ss with each path cut to n bytes.
func capSources(ss []PolicySource, n int) []PolicySource {
	if ss == nil {
		return nil
	}
	out := make([]PolicySource, len(ss))
	for i, s := range ss {
		out[i] = PolicySource{Role: s.Role, Path: truncate(s.Path, n)}
	}
	return out
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
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
