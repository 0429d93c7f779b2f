package audit

import (
	"encoding/json"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

// Constants of the record schema.
const (
	// SchemaVersion is the value of every record's schema_version field. It
	// changes only when a field is removed or changes meaning; added fields
	// keep the version.
	SchemaVersion = "6"

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
	// OutcomeNotRun: the call succeeded with nothing to run (prepare
	// finding its environment cached, prepare --check, prepare --prune,
	// run --print-plan; added to version 5).
	OutcomeNotRun = "not_run"
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
	KindStart         = "start_failed"   // run.ErrStart: the init process or execve failed
	KindCanceled      = "canceled"       // the context was canceled before the run
	KindSignature     = "signature"      // sign.ErrNotVerified: --require-signature refused the skill
	KindPolicy        = "policy"         // a policy file is invalid, or the skill asks for more than is granted
	KindInternal      = "internal"       // anything else
	// KindBusy: skill-sandbox serve had no run slot or queue place for
	// the request (HTTP 429; version 5).
	KindBusy = "busy"
	// KindDraining: skill-sandbox serve was stopping and took no new
	// runs (HTTP 503; version 5).
	KindDraining = "draining"
	// KindNoSpace: the work folder of skill-sandbox serve had less free
	// space than the run may write (HTTP 507; version 5).
	KindNoSpace = "no_space"
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
	// SharedQuotas are the per-user kernel counters the run was charged
	// on a host uid shared with others (run.Result.SharedQuotas): epoll
	// watches of an unprivileged caller's run; omitted when none (version
	// 5).
	SharedQuotas []SharedQuota `json:"shared_quotas,omitempty"`
	// Backend is what ran the script when it was not the native kernel
	// sandbox: "gvisor" (run.Result.Backend); BackendVersion is that
	// runtime's version line ("runsc version ..."), when it was found.
	// Both omitted for the native backend (added within version 5).
	Backend        string `json:"backend,omitempty"`
	BackendVersion string `json:"backend_version,omitempty"`
	// BackendFallback is why a run the gvisor backend was chosen for ran
	// under the native backend (the operator allowed it: run.Sandbox.
	// BackendFallback): gVisor's error; omitted otherwise (added within
	// version 5).
	BackendFallback string `json:"backend_fallback,omitempty"`

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

	// Serve identifies the REST execution behind the record (skill-sandbox
	// serve); absent otherwise. Added in schema version 5.
	Serve *Serve `json:"serve,omitempty"`

	// Policy is the resolved policy of the run (docs/policy.md) as its
	// canonical JSON; absent when the call failed before the policy was
	// resolved, or when it is longer than MaxPolicyBytes (PolicyTruncated
	// is then set and PolicySHA256 still identifies it). Schema version 2.
	Policy          json.RawMessage `json:"policy,omitempty"`
	PolicySHA256    string          `json:"policy_sha256,omitempty"`
	PolicyTruncated bool            `json:"policy_truncated,omitempty"`
	// PolicySources are the policy files that went into Policy.
	PolicySources []PolicySource `json:"policy_sources,omitempty"`

	// Environment is the prepared Python environment the run used, or
	// the prepare call built or found (docs/dependencies.md); absent
	// when there was none. Added to schema version 5.
	Environment *Environment `json:"environment,omitempty"`
	// NodeEnvironment is the skill's prepared Node environment when it
	// has a Python one too, which is then in Environment; absent
	// otherwise. Added to schema version 6.
	NodeEnvironment *Environment `json:"node_environment,omitempty"`

	Tool Tool   `json:"tool"`
	Host string `json:"host"`
	UID  int    `json:"uid"`
	PID  int    `json:"pid"`
}

// MaxEnvironmentPackages bounds Environment.Installed in a record;
// InstalledCount still counts them all.
const MaxEnvironmentPackages = 200

// Environment is a prepared Python or Node environment (package
// prepare).
type Environment struct {
	// Key is its cache key, Path its folder and Digest "sha256:HEX" over
	// its files, as its manifest holds and the call checked.
	Key    string `json:"key"`
	Digest string `json:"digest"`
	Path   string `json:"path"`
	// Built is set when this call built it; false when it was found in
	// the cache.
	Built bool `json:"built"`
	// Installed is what pip's installation report, or a Node
	// environment's lock file, listed when it was built (the first
	// MaxEnvironmentPackages); set by prepare only.
	Installed      []EnvironmentPackage `json:"installed,omitempty"`
	InstalledCount int                  `json:"installed_count,omitempty"`
}

// EnvironmentPackage is one distribution pip installed, or one Node
// package npm installed.
type EnvironmentPackage struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	SHA256  string `json:"sha256,omitempty"`
	// Integrity is a Node package's Subresource Integrity string from
	// the lock file ("sha512-BASE64"). Added to version 5.
	Integrity string `json:"integrity,omitempty"`
}

// SharedQuota is a per-user kernel counter a run shared with others: which
// counter, the host uid charged, and what bounds the run's part
// ("memory_cgroup" or "none").
type SharedQuota struct {
	Counter string `json:"counter"`
	UID     int    `json:"uid"`
	Bound   string `json:"bound"`
	// Budget is, with Bound "run_budget", the epoll_ctl additions the
	// run was allowed; omitted otherwise (added within version 6).
	Budget int `json:"budget,omitempty"`
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

// Serve describes the REST execution of skill-sandbox serve a record
// belongs to. The token is named by its id, never by its value.
type Serve struct {
	// ExecutionID is the execution's id in the REST API.
	ExecutionID string `json:"execution_id"`
	// Tenant is the tenant the token acts for.
	Tenant string `json:"tenant"`
	// TokenID is the id of the token of the request, from the tokens file.
	TokenID string `json:"token_id"`
	// Suppressed counts the requests refused for the server's state
	// (busy, draining, no_space) before this one, since the previous
	// such record, that got no record of their own: the cap of
	// docs/audit.md, "Refused requests". Omitted when 0.
	Suppressed int64 `json:"suppressed,omitempty"`
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
	// AllowLocal and AllowUnix are the host loopback ports and unix
	// sockets the run may reach (schema version 6).
	AllowLocal []int
	AllowUnix  []string
	// Secrets are the injected secrets, "NAME HOST:PORT" (netproxy's
	// Secrets.Targets): never a value.
	Secrets []string
	// MemoryLimitMB and Timeout are the limits asked for; zero means the
	// run package's default, which the record shows.
	MemoryLimitMB int
	Timeout       time.Duration
	// MaxOutput is the run's Sandbox.MaxOutput (0: no limit).
	MaxOutput int64

	ToolVersion string
	// MCP, when set, is copied to the record's mcp field.
	MCP *MCP
	// Serve, when set, is copied to the record's serve field.
	Serve *Serve
	// Policy is the canonical JSON of the resolved policy and PolicySHA256
	// its hash (policy.Resolved.Encode); nil when none was
	// resolved. PolicySources are the files behind it.
	Policy        []byte
	PolicySHA256  string
	PolicySources []PolicySource
	// Time is the record's timestamp; zero means time.Now().
	Time time.Time
	// NoRun marks a call that needed no sandboxed process: without an
	// error its record's outcome is OutcomeNotRun, level info.
	NoRun bool
	// Environment, when set, is copied to the record's environment
	// field (Installed cut to MaxEnvironmentPackages).
	Environment *Environment
	// NodeEnvironment, when set, is copied to the record's
	// node_environment field, as Environment is.
	NodeEnvironment *Environment
}
