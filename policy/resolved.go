package policy

import (
	"fmt"
	"strings"
	"time"
)

// Flags are the limits and grants given on the command line for one run.
// A zero value means the flag was not given.
type Flags struct {
	Timeout    time.Duration
	MemoryMB   int
	MaxProcs   int
	CPUSeconds int
	MaxFileMB  int
	WorkDirMB  int
	WriteMB    int
	// MaxEpollWatches is --max-epoll-watches.
	MaxEpollWatches int

	Read  []string // --read, absolute paths
	Write []string // --write, absolute paths

	AllowNetwork bool     // --allow-network: any host
	AllowHosts   []string // --allow-host patterns
	DenyHosts    []string // --deny-host patterns
	Secrets      []string // --secret specs
	AllowLocal   []int    // --allow-local ports
	AllowUnix    []string // --allow-unix socket paths, absolute

	Env map[string]string // --env NAME=VALUE

	AllowDegraded bool     // --allow-degraded
	Interpreters  []string // --interpreter, absolute paths
	PackageIndex  string   // --index
	NPMRegistry   string   // --registry
	// RequireIsolation is --require-isolation, stricter than any
	// allow_degraded: with it the resolved AllowDegraded is false.
	RequireIsolation bool

	RequireSignature bool   // --require-signature
	AllowedSigners   string // --allowed-signers, absolute

	Backend         string // --backend: run.BackendNative or run.BackendGVisor
	BackendFallback bool   // --backend-fallback
	// Signed says the skill's signature was checked and is good (by
	// the caller, package sign): the operator policy's [backend] signed
	// rule applies to it.
	Signed bool
}

// Resolved is the policy in force for one run. Its JSON form (Encode) is
// what the audit record holds, with its SHA-256; the values of
// environment variables are left out of it, since they may be secrets.
type Resolved struct {
	Resources  ResolvedResources  `json:"resources"`
	Filesystem ResolvedFilesystem `json:"filesystem"`
	Network    ResolvedNetwork    `json:"network"`
	Env        ResolvedEnv        `json:"env"`
	Sandbox    ResolvedSandbox    `json:"sandbox"`
	Signature  ResolvedSignature  `json:"signature"`
	// Backend is what runs the skill and why; nil for the built-in
	// default (native, no fallback), so that policies without a
	// [backend] keep their form and SHA-256.
	Backend *ResolvedBackend `json:"backend,omitempty"`
	// Notes explain grants that a deny removed.
	Notes []string `json:"notes"`

	// Sources are the policy files that went into the resolution.
	Sources []Source `json:"-"`

	signedRule bool              // the operator policy has a [backend] signed rule
	requested  map[string]string // [env] set of the request: the weakest values
	fixed      map[string]string // [env] set of the operator policy, then --env: the strongest
}

// Source is one policy file that went into a resolution.
type Source struct {
	Role string `json:"role"` // "operator" or "request"
	Path string `json:"path"`
}

// ResolvedResources are the limits in force, defaults filled in. The
// default CPUSeconds is one second more than the timeout, as in run.
type ResolvedResources struct {
	TimeoutMS  int64 `json:"timeout_ms"`
	MemoryMB   int   `json:"memory_mb"`
	MaxProcs   int   `json:"max_procs"`
	CPUSeconds int   `json:"cpu_seconds"`
	MaxFileMB  int   `json:"max_file_mb"`
	WorkDirMB  int   `json:"workdir_mb"`
	WriteMB    int   `json:"write_mb"`
	// MaxEpollWatches is 0 when nothing set it: the run's default
	// (run.DefaultEpollWatches of the host), and then not encoded.
	MaxEpollWatches int `json:"max_epoll_watches,omitempty"`
}

// ResolvedFilesystem are the path grants in force, sorted. AllowDenied are
// the operator policy's grants, which the run exempts from its built-in
// deny list when they name a listed path exactly.
type ResolvedFilesystem struct {
	Read        []string `json:"read"`
	Write       []string `json:"write"`
	DenyRead    []string `json:"deny_read"`
	DenyWrite   []string `json:"deny_write"`
	AllowDenied []string `json:"allow_denied"`
	// AllowAutorun are the operator policy's allow_autorun paths that are
	// write grants: their auto-run files stay writable.
	AllowAutorun []string `json:"allow_autorun,omitempty"`
}

// ResolvedNetwork is the network in force: any host with AllowAll, else
// only the allowed patterns minus the denied ones.
type ResolvedNetwork struct {
	AllowAll       bool     `json:"allow_all"`
	AllowedDomains []string `json:"allowed_domains"`
	DeniedDomains  []string `json:"denied_domains"`
	// Secrets are the secret specs in force (--secret and the operator
	// policy's [secrets] inject): names, hosts and files, never values.
	Secrets []string `json:"secrets,omitempty"`
	// AllowLocal are the host loopback ports and AllowUnix the unix
	// sockets the run may reach (--allow-local, --allow-unix and the
	// operator policy's allow_local, allow_unix; schema 6).
	AllowLocal []int    `json:"allow_local,omitempty"`
	AllowUnix  []string `json:"allow_unix,omitempty"`
}

// ResolvedEnv names the variables passed from the caller and those set to
// fixed values (names only).
type ResolvedEnv struct {
	Pass []string `json:"pass"`
	Set  []string `json:"set"`
}

// ResolvedSignature is the signature check a run must pass: with
// Required, the skill's SKILL.sig must be a good signature by a key of
// AllowedSigners. The caller performs the check (package sign).
type ResolvedSignature struct {
	Required       bool   `json:"required"`
	AllowedSigners string `json:"allowed_signers"`
}

// ResolvedSandbox holds the [sandbox] options in force.
type ResolvedSandbox struct {
	AllowDegraded bool `json:"allow_degraded"`
	// Interpreters are the operator policy's, then the flags'.
	Interpreters []string `json:"interpreters,omitempty"`
	// PackageIndex is --index, else the operator policy's.
	PackageIndex string `json:"package_index,omitempty"`
	// NPMRegistry is --registry, else the operator policy's.
	NPMRegistry string `json:"npm_registry,omitempty"`
}

// Missing is one request of a skill's file that is not granted.
type Missing struct {
	Where   string // "file:line:col" of the request
	Request string // what the skill asked for, e.g. "read /data"
	Grant   string // how to grant it, e.g. "--read /data"; "" when a deny forbids it
}

// RefusedError is returned by Resolve when a skill's request file asks for
// more than the command line and the operator policy grant.
type RefusedError struct {
	File    string
	Missing []Missing
}

// Error lists every missing grant on a line of its own.
func (e *RefusedError) Error() string {
	var b strings.Builder
	who := e.File
	if who == "" {
		who = "the run"
	}
	fmt.Fprintf(&b, "%s asks for more than is granted (%d):", who, len(e.Missing))
	for _, m := range e.Missing {
		fmt.Fprintf(&b, "\n  %s: %s", m.Where, m.Request)
		if m.Grant != "" {
			fmt.Fprintf(&b, "; grant it with %s", m.Grant)
		}
	}
	return b.String()
}
