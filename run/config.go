package run

import "os"

// initArg0 is argv[0] of the re-executed init stage. Together with a
// readable config descriptor it tells ExecInitIfRequested that this process
// is the init stage and not the program itself.
const initArg0 = "skill-sandbox-init"

// Descriptors of the init stage besides 0, 1 and 2 (exec.Cmd.ExtraFiles
// start at 3).
const (
	configFD = 3 // supervisor → init: length-prefixed initConfig (wire.go), then one "go" byte
	reportFD = 4 // init → supervisor: JSON lines (initReport), close-on-exec
	statusFD = 5 // init as PID 1 (reaper) → supervisor: the script's wait status and the run's usage (reaperReport)
)

// goByte is what the supervisor writes on the config pipe once it has read
// the layer report and accepts it, when the config asks the init stage to
// wait for it (RequireIsolation); anything else (or EOF) makes init exit.
const goByte = 'g'

// initExitFailure is init's exit status when it gives up before execve.
const initExitFailure = 125

// initConfig is everything the init stage needs: the supervisor decides,
// the init stage only carries out. It travels over configFD in the flat
// encoding of wire.go (byte-exact strings; see sendConfig).
type initConfig struct {
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
	// descriptor of a detached copy of the skill folder (see handOver).
	Grants     []grantMount `json:",omitempty"`
	Masked     []grantMount `json:",omitempty"`
	GrantRules []grantRule  `json:",omitempty"`
	SkillTree  int          `json:",omitempty"`
	// ReadOnly are parts of write grants mounted read-only on themselves
	// once the grants are in place (lockReadOnly).
	ReadOnly []grantMount `json:",omitempty"`

	Layers       []Layer // layers the init stage should apply (namespaces excepted)
	Namespaces   []Layer // namespaces the process was cloned into
	AllowNetwork bool
	// ProxyPort, when set, asks the init stage to listen on
	// 127.0.0.1:ProxyPort inside the network namespace, hand the
	// listening socket to the supervisor over descriptor ProxyFD (a unix
	// socket, SCM_RIGHTS), close that, and allow TCP connect to that port
	// only (see setupNetNS).
	ProxyPort int
	ProxyFD   int

	// Seatbelt is the macOS profile (see seatbelt.go) the init stage
	// executes the script under, through sandbox-exec; empty elsewhere.
	Seatbelt string `json:",omitempty"`

	// WaitForGo makes the init stage wait for goByte after its layer
	// report, so the supervisor can refuse the run before the script
	// starts. Without it the init stage execs at once (one round trip
	// less).
	WaitForGo bool

	Limits limits

	// MemoryCgroup says that the run's cgroup caps its memory; without it
	// the seccomp filter refuses the memory no process's size shows
	// (seccompPolicy.noMemCgroup).
	MemoryCgroup bool

	// seccomp is decided by the init stage itself, from the namespaces
	// that took effect, and used for every thread it filters.
	seccomp seccompPolicy

	// oomScore is the reaper's own oom_score_adj, opened before Landlock
	// (see oom_linux.go).
	oomScore *os.File

	// changed is set by runSteps when a layer found the host no longer as
	// the supervisor checked it (an error wrapping ErrBadConfig: a grant
	// or masked entry swapped meanwhile). That is an attack under way, not
	// a missing kernel feature: the run is refused, AllowDegraded or not.
	changed error
}

// limits are the resource limits applied by the init stage. Zero means
// "leave as is".
type limits struct {
	AddressSpace uint64 // RLIMIT_AS, bytes
	CPUSeconds   uint64 // RLIMIT_CPU
	Procs        uint64 // RLIMIT_NPROC
	FileSize     uint64 // RLIMIT_FSIZE, bytes
	OpenFiles    uint64 // RLIMIT_NOFILE
}

// initReport is one line the init stage writes on reportFD: first the layer
// report, then (only if execve failed) ExecError. A fatal problem before the
// layers are done is reported in Fatal.
type initReport struct {
	Applied   []Layer   `json:",omitempty"`
	Missing   []Missing `json:",omitempty"`
	ExecError string    `json:",omitempty"`
	Fatal     string    `json:",omitempty"`
}

// has reports whether l is in ls.
func has(ls []Layer, l Layer) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// firstTreeFD is the init stage's descriptor of the first detached tree:
// the trees follow configFD, reportFD and statusFD in ExtraFiles.
const firstTreeFD = statusFD + 1

// DefaultWorkDirMB is the size of the work folder's tmpfs when the
// supervisor asks for one without a size; run.DefaultWorkDirMB is this.
const DefaultWorkDirMB = 256
