package run

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/plan"
	"time"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

// Output describes one output stream of the script.
type Output struct {
	Bytes     int64  // total bytes written by the script
	SHA256    string // hex SHA-256 of all bytes written
	Captured  []byte // the first OutputCap bytes
	Truncated bool   // Bytes > len(Captured)
}

// String returns the captured bytes as text: all the script wrote, or its
// first OutputCap bytes when Truncated is set.
func (o Output) String() string { return string(o.Captured) }

// Result describes a finished (or refused) run.
type Result struct {
	Skill       string          // skill name from SKILL.md, when it could be read
	Script      string          // script path relative to the skill folder
	Interpreter []string        // argv prefix used, e.g. ["/usr/bin/python3"]
	Validation  validate.Result // result of validating the skill before the run
	Started     bool            // whether the script's process was started

	// MemoryLimitMB and Timeout are the limits the run was given: the
	// Sandbox's, or the defaults where it left them zero.
	MemoryLimitMB int
	Timeout       time.Duration

	ExitCode int    // exit status; -1 when killed by a signal or not started
	Signal   string // signal name when killed by one, e.g. "SIGKILL"
	TimedOut bool   // killed because Timeout passed
	Canceled bool   // killed because the context was canceled

	Duration time.Duration // wall time from start to exit
	CPUTime  time.Duration // user + system time of the process tree
	MaxRSSKB int64         // peak resident set size in KiB

	// PeakMemoryKB is the run's cgroup's highest memory charge in KiB:
	// every process, plus tmpfs, memfd and page cache pages it used. 0
	// without the cgroup layer (or on kernels that do not track it).
	PeakMemoryKB int64
	// OOMKills counts processes of the run killed by the cgroup's memory
	// limit.
	OOMKills int

	// AddressSpaceMB is the RLIMIT_AS really applied, in MiB: MemoryMB,
	// plus a fixed allowance for interpreters that reserve address space
	// up front (node; its heap is still capped at MemoryMB).
	AddressSpaceMB int

	Stdout, Stderr Output

	WorkDir string // the kept work folder when KeepWorkDir is set

	// SandboxUID is the host uid (and gid) the script's processes had
	// when it was not the caller's: a root caller's run's own id
	// (docs/run.md, "Host identity of a root caller's runs"), or 65534
	// in a nested user namespace; 0 when the script ran as the caller or
	// never started. Files and processes of that uid on the host are the
	// run's.
	SandboxUID int

	// SharedQuotas are the per-user kernel counters the run was charged
	// on a host uid it shares with others (the caller's, or nobody's),
	// which nothing bounds per run below the host-wide limit but Bound:
	// what a run could take from the caller's other processes
	// (docs/security.md, "Per-user kernel quotas"). Empty when the run
	// had a host uid of its own, or never started. Linux only.
	SharedQuotas []SharedQuota

	// LimitExceeded is set when the supervisor's watch killed the run:
	// LimitWorkDirBytes, LimitWorkDirInodes or LimitMemory.
	LimitExceeded string

	// OutputExceeded is "stdout" or "stderr" (stdout when both) when that
	// stream passed Sandbox.MaxOutput: nothing past the limit was
	// streamed, and the run was killed for it unless it had ended first.
	OutputExceeded string

	// Grants are the resolved ReadPaths, WritePaths and Cwd.
	Grants Grants

	// Artifacts lists the files created, changed or deleted under the
	// write grants and in a kept work folder, once the script has ended.
	Artifacts Artifacts

	Applied []Layer   // layers in force for the script
	Missing []Missing // layers that could not be applied

	// Backend is what ran the script, BackendNative or BackendGVisor;
	// BackendVersion is its version where it has one of its own (runsc's
	// version line), else "".
	Backend, BackendVersion string
	// BackendFallback is why a BackendGVisor run ran under the native
	// backend (Sandbox.BackendFallback): gVisor's error; "" otherwise.
	BackendFallback string

	// Network is the proxy's log when AllowHosts was set and the proxy
	// started; nil otherwise.
	Network *netproxy.Report

	// cleanup, when not nil, ends once the run's sandbox is gone (see
	// WaitCleanup); its Wait says whether the cgroup was removed while
	// the init process was still exiting, having moved itself out (see
	// posix.FinishLater).
	cleanup *backend.Cleanup
	// made are the folders Run created for missing write grants, removed
	// again when the script never started (unmakeRefused).
	made []string
	// epollBudget is backend.Outcome.EpollBudget (see sharedQuotas).
	epollBudget int
}

// WaitCleanup blocks until the run's sandbox is gone: its init process
// reaped, its cgroup and its work folder removed. Run returns as soon as
// the script's status and the run's resource usage are known, when every
// process of the run but the sandbox's init process has ended; that process
// then exits by itself, and the kernel tears its namespaces down, while the
// caller goes on. A program that exits right after Run should call
// WaitCleanup first, or the run's cgroup is left behind (empty, until a
// later run sweeps it) and its init process is left to whichever process
// adopts orphans. It returns at once for a run that had nothing left to
// clean up, and may be called more than once.
func (r *Result) WaitCleanup() {
	if r != nil {
		r.cleanup.Wait()
	}
}

// Errors returned by Run, wrapped with detail; test with errors.Is. Run
// always returns a non-nil Result, so callers can report a refused run.
var (
	ErrInvalidSkill  = plan.ErrInvalidSkill
	ErrBadScript     = plan.ErrBadScript            // missing, outside scripts/, not a regular file
	ErrNoInterpreter = stageconfig.ErrNoInterpreter // e.g. node not installed
	ErrIsolation     = backend.ErrIsolation         // a layer is missing and AllowDegraded is not set, or one was built part-way
	ErrBadConfig     = stageconfig.ErrBadConfig     // e.g. a refused Env key
	ErrUnsupported   = backend.ErrUnsupported       // no sandbox implementation here
	ErrStart         = backend.ErrStart             // the init process or execve of the interpreter failed
)
