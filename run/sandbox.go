// Package run executes one script of an Agent Skill in a sandbox.
//
// A Sandbox describes the limits of one run. Run validates the skill,
// resolves the script inside its scripts/ folder, chooses the interpreter and
// starts it with an empty environment plus an allowlist, a pinned working
// directory, a wall-time limit and resource limits. On Linux the process is
// started through a re-executed init stage of the calling binary, which
// applies kernel isolation layers in a fixed order before execve (see
// ExecInitIfRequested and Layer). With a PID namespace the init stage stays
// PID 1 as the run's reaper and starts the script as its child, so the
// script is not PID 1 and keeps ordinary signal semantics. Programs that use this package must call
// ExecInitIfRequested first thing in main (and in TestMain for tests).
package run

import (
	"errors"
	"io"
	"time"

	"github.com/skill-sandbox/skill-sandbox/validate"
)

// Defaults applied by Run to zero fields of a Sandbox.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMemoryMB     = 512
	DefaultOutputCap    = 1 << 20 // bytes captured per stream
	DefaultMaxProcs     = 128
	DefaultMaxFileMB    = 256
	DefaultMaxOpenFiles = 256
	DefaultWorkDirMB    = 256
)

// Layer names one isolation mechanism. Result.Applied and Result.Missing use
// these names, and they are stable: audit records and probes refer to them.
type Layer string

// The layers, in the order the init stage applies them.
const (
	LayerUserNS        Layer = "userns"         // user namespace: no host privileges, uid mapped
	LayerPIDNS         Layer = "pidns"          // PID namespace: host processes invisible, tree dies with its init
	LayerMountNS       Layer = "mountns"        // mount namespace: private /proc, host /tmp, /run, /dev/shm masked
	LayerIPCNS         Layer = "ipcns"          // IPC namespace: no host SysV IPC or POSIX queues
	LayerUTSNS         Layer = "utsns"          // UTS namespace: host name hidden
	LayerNetNS         Layer = "netns"          // network namespace: no interfaces (omitted with AllowNetwork)
	LayerRlimits       Layer = "rlimits"        // RLIMIT_AS, CPU, NPROC, FSIZE, NOFILE, CORE
	LayerCaps          Layer = "capabilities"   // every capability and the bounding set dropped
	LayerNoNewPrivs    Layer = "no_new_privs"   // setuid binaries and file capabilities cannot raise privileges
	LayerLandlockFS    Layer = "landlock-fs"    // read-only system dirs and skill, read-write work folder only
	LayerLandlockNet   Layer = "landlock-net"   // TCP bind and connect denied (omitted with AllowNetwork)
	LayerLandlockScope Layer = "landlock-scope" // no signals or abstract unix sockets outside the sandbox
	LayerSeccomp       Layer = "seccomp"        // deny-list of kernel-attack syscalls, with the arch check
)

// Sandbox describes one sandboxed run. The zero value of each field selects
// the safe default documented on it.
type Sandbox struct {
	// SkillDir is the skill folder (the one holding SKILL.md).
	SkillDir string

	// Env adds variables to the allowlisted environment. Keys that would
	// change how an interpreter or the dynamic loader behaves (LD_PRELOAD,
	// PYTHONPATH, NODE_OPTIONS, ...) are refused by Run.
	Env map[string]string

	// AllowNetwork keeps the host network: no network namespace and no
	// Landlock TCP rules. Off by default.
	AllowNetwork bool

	// Timeout is the wall-time limit; DefaultTimeout when zero.
	Timeout time.Duration

	// MemoryMB is the RLIMIT_AS cap in MiB; DefaultMemoryMB when zero.
	MemoryMB int

	// MaxProcs caps the processes (and threads) of the script
	// (RLIMIT_NPROC inside the sandbox's user namespace); DefaultMaxProcs
	// when zero. Under a PID namespace the reaper's few Go threads are
	// added to the limit, with a slack of two, so the script gets at
	// least MaxProcs.
	MaxProcs int

	// MaxFileMB caps the size of any file the script writes (RLIMIT_FSIZE);
	// DefaultMaxFileMB when zero.
	MaxFileMB int

	// MaxOpenFiles caps open descriptors (RLIMIT_NOFILE);
	// DefaultMaxOpenFiles when zero.
	MaxOpenFiles int

	// OutputCap is how many bytes of stdout and of stderr each are kept in
	// Result; DefaultOutputCap when zero. Streaming to Stdout/Stderr is not
	// capped.
	OutputCap int

	// UseWorkDir runs the script with a fresh per-run work folder as its
	// working directory instead of the skill's scripts/ folder. HOME and
	// TMPDIR always point to the work folder.
	UseWorkDir bool

	// KeepWorkDir keeps the work folder after the run (its path is in
	// Result.WorkDir) so outputs can be collected as artifacts.
	KeepWorkDir bool

	// WorkDirMB caps the total size of the work folder when it is not
	// kept: the sandbox then gets a private tmpfs of that size (memory,
	// not disk) instead of the host folder, so a script cannot fill the
	// disk. DefaultWorkDirMB when zero. A kept work folder is a host
	// folder, bounded only by MaxFileMB per file and the time limit.
	WorkDirMB int

	// RequireIsolation makes a missing kernel layer an error instead of a
	// warning.
	RequireIsolation bool

	// Stdin feeds the script's standard input; nil means /dev/null.
	Stdin io.Reader

	// Stdout and Stderr receive the script's output as it is written; nil
	// discards it (it is still counted, hashed and captured up to OutputCap).
	Stdout, Stderr io.Writer

	// Warnings receives one line per missing isolation layer; nil discards.
	Warnings io.Writer

	// RequestID, when set, is exported to the script as
	// SKILL_SANDBOX_REQUEST_ID.
	RequestID string

	// Strict makes validation warnings fail the run, as validate --strict.
	Strict bool

	// Disable turns off single layers. It exists for tests that show an
	// attack succeeding without a layer and failing with it; a disabled
	// layer is reported in Result.Missing with the reason "disabled".
	Disable []Layer
}

// Output describes one output stream of the script.
type Output struct {
	Bytes     int64  // total bytes written by the script
	SHA256    string // hex SHA-256 of all bytes written
	Captured  []byte // the first OutputCap bytes
	Truncated bool   // Bytes > len(Captured)
}

// Missing records a layer that could not be applied and why.
type Missing struct {
	Layer  Layer
	Reason string
}

// Result describes a finished (or refused) run.
type Result struct {
	Skill       string          // skill name from SKILL.md, when it could be read
	Script      string          // script path relative to the skill folder
	Interpreter []string        // argv prefix used, e.g. ["/usr/bin/python3"]
	Validation  validate.Result // result of validating the skill before the run
	Started     bool            // whether the script's process was started

	ExitCode int    // exit status; -1 when killed by a signal or not started
	Signal   string // signal name when killed by one, e.g. "SIGKILL"
	TimedOut bool   // killed because Timeout passed
	Canceled bool   // killed because the context was canceled

	Duration time.Duration // wall time from start to exit
	CPUTime  time.Duration // user + system time of the process tree
	MaxRSSKB int64         // peak resident set size in KiB

	// AddressSpaceMB is the RLIMIT_AS really applied, in MiB: MemoryMB,
	// plus a fixed allowance for interpreters that reserve address space
	// up front (node; its heap is still capped at MemoryMB).
	AddressSpaceMB int

	Stdout, Stderr Output

	WorkDir string // the kept work folder when KeepWorkDir is set

	Applied []Layer   // layers in force for the script
	Missing []Missing // layers that could not be applied
}

// Errors returned by Run, wrapped with detail; test with errors.Is. Run
// always returns a non-nil Result, so callers can report a refused run.
var (
	ErrInvalidSkill  = errors.New("skill is invalid")
	ErrBadScript     = errors.New("script refused")         // missing, outside scripts/, not a regular file
	ErrNoInterpreter = errors.New("interpreter not found")  // e.g. node not installed
	ErrIsolation     = errors.New("isolation unavailable")  // RequireIsolation with a missing layer
	ErrBadConfig     = errors.New("invalid sandbox config") // e.g. a refused Env key
	ErrUnsupported   = errors.New("platform not supported") // no sandbox implementation here
	ErrStart         = errors.New("sandbox start failed")   // the init stage or execve of the interpreter failed
)
