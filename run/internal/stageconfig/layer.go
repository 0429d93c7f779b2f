package stageconfig

import (
	"errors"
)

// Layer names one isolation mechanism. Result.Applied and Result.Missing use
// these names, and they are stable: audit records and probes refer to them.
type Layer string

// The layers, in the order they are applied: the namespaces by clone(2),
// the cgroup by the supervisor before the init stage reads its config, the
// rest by the init stage.
const (
	LayerUserNS        Layer = "userns"         // user namespace: no host privileges, uid mapped
	LayerPIDNS         Layer = "pidns"          // PID namespace: host processes invisible, tree dies with its init
	LayerMountNS       Layer = "mountns"        // mount namespace: private /proc, host /tmp, /run, /dev/shm masked
	LayerIPCNS         Layer = "ipcns"          // IPC namespace: no host SysV IPC or POSIX queues
	LayerUTSNS         Layer = "utsns"          // UTS namespace: host name hidden
	LayerNetNS         Layer = "netns"          // network namespace: only its own loopback, up (omitted with AllowNetwork)
	LayerCgroup        Layer = "cgroup"         // per-run cgroup: memory.max (no swap), pids.max, cpu.max for the whole tree
	LayerWatch         Layer = "watch"          // supervisor's poll: work folder size and inodes on the host disk, memory without a cgroup
	LayerRlimits       Layer = "rlimits"        // RLIMIT_AS, CPU, NPROC, FSIZE, NOFILE, CORE, MSGQUEUE, SIGPENDING, MEMLOCK
	LayerQuotas        Layer = "quotas"         // per-user kernel counters (inotify, fanotify, namespaces) capped in the run's user namespace
	LayerCaps          Layer = "capabilities"   // every capability and the bounding set dropped
	LayerNoNewPrivs    Layer = "no_new_privs"   // setuid binaries and file capabilities cannot raise privileges
	LayerLandlockFS    Layer = "landlock-fs"    // read-only system dirs and skill, read-write work folder only
	LayerLandlockNet   Layer = "landlock-net"   // TCP bind and connect denied where netns is missing (omitted with AllowNetwork or netns)
	LayerLandlockScope Layer = "landlock-scope" // no signals or abstract unix sockets outside the sandbox
	LayerSeccomp       Layer = "seccomp"        // deny-list of kernel-attack syscalls, with the arch check
)

// The layers of other platforms (see docs/platforms.md). A run reports
// only the layers of its own platform.
const (
	LayerSeatbelt     Layer = "seatbelt"     // macOS: sandbox-exec profile: files, network, process info, signals, Mach services
	LayerJob          Layer = "job"          // Windows: Job Object: memory, process count, kill on close, UI limits
	LayerAppContainer Layer = "appcontainer" // Windows: file and network isolation (not implemented: always missing)
)

// Missing records a layer that could not be applied and why.
type Missing struct {
	Layer  Layer
	Reason string
}

// ErrBadConfig is run.ErrBadConfig: an invalid sandbox config, or a host
// that changed since the supervisor's checks (see runSteps).
var ErrBadConfig = errors.New("invalid sandbox config") // e.g. a refused Env key

// ErrNoInterpreter is run.ErrNoInterpreter: the script's interpreter is
// not installed, or not one the sandbox can run.
var ErrNoInterpreter = errors.New("interpreter not found") // e.g. node not installed
