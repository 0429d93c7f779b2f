package stageconfig

// SandboxHostname is the host name inside the sandbox's UTS namespace.
const SandboxHostname = "skill-sandbox"

// Config is everything the init process needs: the supervisor decides,
// the init process only carries out. It travels over ConfigFD in the flat
// encoding of wire.go (byte-exact strings; see sendConfig).
type Config struct {
	Argv    []string // Argv[0] is the absolute path executed
	Env     []string
	Dir     string // working directory of the script
	Skill   string // skill folder (read-only)
	WorkDir string // work folder (read-write)
	// WorkDirMB, when set, replaces the work folder by a private tmpfs of
	// that size inside the mount namespace.
	WorkDirMB int

	// Grants are bind-mounted at their own path, parents first; Masked
	// entries (inside read grants) are hidden; GrantRules are the
	// Landlock rules of the grants. SkillTree, when not 0, is the
	// descriptor of a detached copy of the skill folder (see grants.HandOver).
	Grants     []GrantMount `json:",omitempty"`
	Masked     []GrantMount `json:",omitempty"`
	GrantRules []GrantRule  `json:",omitempty"`
	SkillTree  int          `json:",omitempty"`
	// ReadOnly are parts of write grants mounted read-only on themselves
	// once the grants are in place (lockReadOnly).
	ReadOnly []GrantMount `json:",omitempty"`
	// Aliases are the grants' paths as typed, where they differ from
	// the resolved ones, re-created as symlinks in the sandbox's root.
	Aliases []GrantAlias `json:",omitempty"`

	Layers       []Layer // layers the init process should apply (namespaces excepted)
	Namespaces   []Layer // namespaces the process was cloned into
	AllowNetwork bool
	// ProxyPort, when set, asks the init process to listen on
	// 127.0.0.1:ProxyPort inside the network namespace, hand the
	// listening socket to the supervisor over descriptor ProxyFD (a unix
	// socket, SCM_RIGHTS), close that, and allow TCP connect to that port
	// only (see setupNetNS).
	ProxyPort int
	ProxyFD   int
	// LocalPorts, with ProxyPort, ask the init process for one more
	// listening socket on 127.0.0.1:PORT each, handed over after the
	// proxy's, and a Landlock connect rule for each: the relays of the
	// host's loopback ports the run may reach (--allow-local).
	LocalPorts []int `json:",omitempty"`
	// EpollBudget, when set, asks the init process to load its seccomp
	// filter with a listener (the filter then sends epoll_ctl's
	// EPOLL_CTL_ADD to it) and to hand the listener to the supervisor over
	// descriptor NotifyFD (a unix socket, SCM_RIGHTS), which answers at
	// most EpollBudget of them with the call's go-ahead and the rest with
	// ENOSPC (see run/internal/seccomp's EpollServer): the run's share of
	// the epoll watches of a host uid it shares with others.
	EpollBudget int `json:",omitempty"`
	NotifyFD    int `json:",omitempty"`

	// Seatbelt is the macOS profile (see run/internal/seatbelt) the init
	// process executes the script under, through sandbox-exec; empty
	// elsewhere.
	Seatbelt string `json:",omitempty"`

	// WaitForGo makes the init process wait for GoByte after its layer
	// report, so the supervisor can refuse the run before the script
	// starts. Without it the init process execs at once (one round trip
	// less).
	WaitForGo bool

	Limits Limits

	// MemoryCgroup says that the run's cgroup caps its memory; without it
	// the seccomp filter refuses the memory no process's size shows
	// (seccomp.Policy.NoMemCgroup).
	MemoryCgroup bool

	// Machine is the size of the machine programs inside are shown.
	Machine Machine
}

// Machine is the machine a run's programs see where they look for its
// size (/proc/meminfo, /proc/cpuinfo, /proc/stat, their CPU affinity):
// the run's own limits rather than the host's (see initplan's machine.go).
type Machine struct {
	// MemoryMB is the memory shown as the machine's (MemTotal); 0
	// shows the host's.
	MemoryMB int
	// CPUs are the host CPUs the run is pinned to (its affinity) and
	// shows; none leaves the affinity and the CPU files as they are.
	CPUs []int
}

// Limits are the resource limits applied by the init process. Zero means
// "leave as is".
type Limits struct {
	AddressSpace uint64 // RLIMIT_AS, bytes
	CPUSeconds   uint64 // RLIMIT_CPU
	Procs        uint64 // RLIMIT_NPROC
	FileSize     uint64 // RLIMIT_FSIZE, bytes
	OpenFiles    uint64 // RLIMIT_NOFILE
}

// Report is the init process's layer report as the supervisor reads it:
// on macOS one JSON line the init process writes on ReportFD, first the
// layer report, then (only if execve failed) ExecError; on Linux made from
// initproc's binary report by initplan's Plan.Report. A fatal problem
// before the layers are done is reported in Fatal.
//
// Incomplete lists the layers the kernel offers but whose construction
// failed part-way (a grant that could not be bound, a mask that could not
// be mounted, a Landlock rule that could not be added): each is also in
// Missing, and the init process has refused the run itself, whatever
// AllowDegraded says. AllowDegraded accepts a layer the host does not
// offer, never one half built (see docs/security.md, "Fail closed").
//
// Changed says that the init process found the host no longer as the
// supervisor checked it (a grant or masked entry swapped since, e.g. for a
// symlink): an attack under way, which refuses the run as an isolation
// refusal, not a failed start. The layers are reported beside it.
type Report struct {
	Applied    []Layer   `json:",omitempty"`
	Missing    []Missing `json:",omitempty"`
	Incomplete []Missing `json:",omitempty"`
	Changed    string    `json:",omitempty"`
	// Prebuilt: the run's root is the one a pooled init process built ahead
	// (counted in run.PoolStats.Prebuilt).
	Prebuilt  bool   `json:",omitempty"`
	ExecError string `json:",omitempty"`
	Fatal     string `json:",omitempty"`
}

// Has reports whether l is in ls.
func Has(ls []Layer, l Layer) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// DefaultWorkDirMB is the size of the work folder's tmpfs when the
// supervisor asks for one without a size; run.DefaultWorkDirMB is this.
const DefaultWorkDirMB = 256
