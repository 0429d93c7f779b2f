package run

import "github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

// Layer names one isolation mechanism. Result.Applied and Result.Missing use
// these names, and they are stable: audit records and probes refer to them.
// The init process reports them too, so the type lives in stageconfig.
type Layer = stageconfig.Layer

// The layers, in the order they are applied: the namespaces by clone(2),
// the cgroup by the supervisor before the init process reads its config, the
// rest by the init process. See stageconfig for what each one does.
const (
	LayerUserNS        = stageconfig.LayerUserNS        // user namespace: no host privileges, uid mapped
	LayerPIDNS         = stageconfig.LayerPIDNS         // PID namespace: host processes invisible, tree dies with its init
	LayerMountNS       = stageconfig.LayerMountNS       // mount namespace: private /proc, host /tmp, /run, /dev/shm masked
	LayerIPCNS         = stageconfig.LayerIPCNS         // IPC namespace: no host SysV IPC or POSIX queues
	LayerUTSNS         = stageconfig.LayerUTSNS         // UTS namespace: host name hidden
	LayerNetNS         = stageconfig.LayerNetNS         // network namespace: only its own loopback, up (omitted with AllowNetwork)
	LayerCgroup        = stageconfig.LayerCgroup        // per-run cgroup: memory.max (no swap), pids.max, cpu.max for the whole tree
	LayerWatch         = stageconfig.LayerWatch         // supervisor's poll: work folder size and inodes on the host disk, memory without a cgroup
	LayerRlimits       = stageconfig.LayerRlimits       // RLIMIT_AS, CPU, NPROC, FSIZE, NOFILE, CORE, MSGQUEUE, SIGPENDING, MEMLOCK
	LayerQuotas        = stageconfig.LayerQuotas        // per-user kernel counters (inotify, fanotify, namespaces) capped in the run's user namespace
	LayerCaps          = stageconfig.LayerCaps          // every capability and the bounding set dropped
	LayerNoNewPrivs    = stageconfig.LayerNoNewPrivs    // setuid binaries and file capabilities cannot raise privileges
	LayerLandlockFS    = stageconfig.LayerLandlockFS    // read-only system dirs and skill, read-write work folder only
	LayerLandlockNet   = stageconfig.LayerLandlockNet   // TCP bind and connect denied where netns is missing (omitted with AllowNetwork or netns)
	LayerLandlockScope = stageconfig.LayerLandlockScope // no signals or abstract unix sockets outside the sandbox
	LayerSeccomp       = stageconfig.LayerSeccomp       // deny-list of kernel-attack syscalls, with the arch check
)

// The layers of other platforms (see docs/platforms.md). A run reports
// only the layers of its own platform.
const (
	LayerSeatbelt     = stageconfig.LayerSeatbelt     // macOS: sandbox-exec profile: files, network, process info, signals, Mach services
	LayerJob          = stageconfig.LayerJob          // Windows: Job Object: memory, process count, kill on close, UI limits
	LayerAppContainer = stageconfig.LayerAppContainer // Windows: file and network isolation (not implemented: always missing)
)

// Missing records a layer that could not be applied and why.
type Missing = stageconfig.Missing

// DefaultWorkDirMB is the default size of the work folder's tmpfs
// (Sandbox.WorkDirMB).
const DefaultWorkDirMB = stageconfig.DefaultWorkDirMB

// DefaultWriteMB is how much the write grants may grow during a run by
// default (Sandbox.WriteMB): enough for documents, media and builds, not
// enough to fill a disk unnoticed.
const DefaultWriteMB = 1024

// DefaultDenyPaths returns the built-in deny list: places holding
// credentials, keys, tokens, shell and REPL history or browser profiles.
// See stageconfig.DefaultDenyPaths for how entries apply.
func DefaultDenyPaths() []string { return stageconfig.DefaultDenyPaths() }
