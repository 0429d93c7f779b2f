// Package backend is the contract between run and the code that starts
// a run's processes, and what every such backend shares: Spec, what the
// supervisor decided for one run before anything is started; the
// fail-closed rule; the watchdog; the errors.
//
// For most uses, the planning (run/internal/plan) fills one Spec per
// run from a run.Sandbox (every check and decision that needs no process: the
// script's argv and environment, the grants, the limits, the layers
// wanted and refused), and the launch reads it without changing it; what
// a launch changes as it goes (the config completed with the namespaces
// had, the descriptors, the cgroup) is the launch's own state. Each
// backend (run/internal/backend/native, whose process layer is
// run/internal/backend/posix, and run/internal/backend/winjob) starts
// from a Spec alone, so a new backend (gVisor, a remote runner) needs a
// Spec and nothing of run.Sandbox. Once it knows which layers it has,
// a backend asks Refusing which missing ones refuse the run (an
// IsolationError), or IncompleteError for layers built part-way, and
// WarnDegraded writes the rest; its Watchdog ends the run on
// Spec.Timeout, a cancellation, an output past its cap or a limit the
// watch found.
//
// It runs in the supervisor: a Spec is built and read there. The init
// process never sees one; it gets Spec.Config (stageconfig), compiled
// for it (run/internal/initplan on Linux) or encoded (macOS).
package backend

import (
	"io"
	"os"
	"time"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// Spec is what was decided for one run before starting anything: the
// paths, grants, limits, environment and layers wanted. It is not changed
// once prepared.
type Spec struct {
	// Config is the init process's config as decided; a launch completes
	// a copy of it (the namespaces had, the proxy's descriptor, the
	// cgroup).
	Config     stageconfig.Config
	UID, GID   int                 // host uid and gid the script runs as
	Namespaces []stageconfig.Layer // namespaces to create
	Disabled   []stageconfig.Layer // layers turned off by the caller
	Timeout    time.Duration
	Stdin      io.Reader // nil for /dev/null
	Output     Output
	Strict     bool      // RequireIsolation: every missing layer refuses
	Degraded   bool      // AllowDegraded: no missing layer refuses
	Warnings   io.Writer // one line per cause of missing layers; may be nil
	RequestID  string
	MemoryMB   int // Sandbox.MemoryMB or its default
	// WatchWorkDirMB caps a work folder on the host disk (the watch):
	// Sandbox.WorkDirMB or its default, also when the folder is kept.
	WatchWorkDirMB int
	// WatchWriteMB caps the growth of the write grants (the watch):
	// Sandbox.WriteMB or its default.
	WatchWriteMB int
	Cgroup       cgroup.Limits // limits of the run's cgroup

	// ExtraFiles are passed to the init process after its fixed
	// descriptors: the detached trees handed over.
	ExtraFiles []*os.File
	// NeedMountNS is the error to return when the run gets no mount
	// namespace: the trees cannot be attached, and the sandbox identity
	// cannot reach these paths through the host's folders.
	NeedMountNS error
	// ArtifactRoots are the folders whose changes are listed in
	// Result.Artifacts.
	ArtifactRoots []string
	// SweepAutorun and Autorun are the grant plan's (see grants.Plan),
	// for artifacts.Sweep.
	SweepAutorun []string
	Autorun      map[string]uint64
	// Proxy is the host allowlist's proxy config; nil without one.
	Proxy *netproxy.Config
	// DenyPaths and AllowDenied are Sandbox.DenyPaths and AllowDenied,
	// for the platforms that state the deny list in a profile (macOS).
	DenyPaths, AllowDenied []string
	// HostWorkDir says whether the planning made the work folder on the host:
	// with a mount namespace it is made inside the sandbox's root (and
	// on the host by the launch if that layer fails).
	HostWorkDir bool
	// GVisor runs the script under gVisor's runsc (Sandbox.Backend)
	// rather than the native launch.
	GVisor bool
	// GVisorFallback runs a GVisor plan under the native launch when
	// runsc is missing or cannot start here (Sandbox.BackendFallback).
	GVisorFallback bool
}

// Output is where the script's output streams go: the caller's writers
// (nil for none), how much of each the result keeps (CapBytes) and how
// much is forwarded before the run ends (MaxStream, Sandbox.MaxOutput; 0
// for no end).
type Output struct {
	Stdout, Stderr io.Writer
	CapBytes       int
	MaxStream      int64
}
