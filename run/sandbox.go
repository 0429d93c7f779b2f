package run

import (
	"context"
	"github.com/skill-sandbox/skill-sandbox/run/internal/plan"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// Defaults applied by Run to zero fields of a Sandbox.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultMemoryMB     = 512
	DefaultOutputCap    = 1 << 20 // bytes captured per stream
	DefaultMaxProcs     = 128
	DefaultMaxFileMB    = 256
	DefaultMaxOpenFiles = 256
)

// EpollWatchesFloor is the least DefaultEpollWatches gives where the
// host allows more: about ten thousand connections of an event loop,
// which adds each socket two or three times (python's asyncio, node and
// Go's net/http made 602, 607 and 403 additions for 200 HTTP requests).
const EpollWatchesFloor = plan.EpollWatchesFloor

// DefaultEpollWatches is Sandbox.MaxEpollWatches when zero, for a host
// whose fs.epoll.max_user_watches is maxUserWatches (0: unknown): an
// eighth of it, as the quotas layer gives of the caller's other per-user
// counters (four runs at once leave the caller half), but at least
// EpollWatchesFloor, and never more than maxUserWatches.
func DefaultEpollWatches(maxUserWatches int) int { return plan.DefaultEpollWatches(maxUserWatches) }

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
	// Landlock TCP rules. Off by default. It cannot be combined with
	// AllowHosts.
	AllowNetwork bool

	// AllowHosts turns on the network allowlist: the run keeps its private
	// network namespace (loopback only), and a filtering proxy in the
	// calling process (package netproxy), reached through a port on the
	// sandbox's loopback that the proxy variables point at, carries
	// connections to these hosts only. Entries are netproxy patterns:
	// "api.example.com", "*.example.com", optionally with ":PORT"
	// (default 80 and 443), or an IP address (an explicit grant, also for
	// private and loopback addresses). Needs the user and network
	// namespaces: without them Run refuses (ErrIsolation), never falling
	// back to an open network. On macOS the proxy listens on a loopback
	// port of the host that the Seatbelt profile allows, and nothing else.
	AllowHosts []string

	// DenyHosts are exceptions to AllowHosts, in the same syntax; deny
	// wins.
	DenyHosts []string

	// AllowLocal are ports of the host's loopback the run may reach (a
	// dev server, a database), never any by default: inside the run
	// 127.0.0.1:PORT is a listener the supervisor relays to the host's
	// 127.0.0.1:PORT (for clients that use no proxy, like psql), and the
	// proxy carries localhost:PORT and 127.0.0.1:PORT there. No other
	// port of the host's loopback is reached. It turns the proxy on as
	// AllowHosts does, with its namespace requirements (Linux only).
	AllowLocal []int

	// AllowUnix are unix socket paths on the host the run may connect
	// to, never any by default: each socket is mounted into the run at
	// its own path, and nothing else of its folder is (Linux, with the
	// mount namespace).
	AllowUnix []string

	// Secrets are credentials the proxy injects (needs AllowHosts naming
	// their hosts): the script's variable of each secret holds its
	// placeholder, and the run trusts the secrets' CA through a bundle
	// file (the host's system bundle and that CA) named by SSL_CERT_FILE
	// and the other variables of docs/secrets.md. Values never enter
	// the sandbox.
	Secrets *netproxy.Secrets

	// Timeout is the wall-time limit; DefaultTimeout when zero.
	Timeout time.Duration

	// MemoryMB is the memory limit in MiB; DefaultMemoryMB when zero.
	// With the cgroup layer it caps the whole process tree (memory.max is
	// MemoryMB plus WorkDirMB when the work folder is a tmpfs, whose files
	// are memory too; no swap). Without a cgroup the supervisor's watch
	// kills the run when the private resident memory of its processes
	// passes it (Result.LimitExceeded), and memfd_create and System V
	// shared memory, which no process's resident size shows, are refused.
	// Under either, each process's RLIMIT_AS is MemoryMB plus 16 GiB, so
	// that address space reserved and not used (thread stacks, malloc
	// arenas, a JVM, node) costs nothing; with neither (both layers
	// disabled) RLIMIT_AS is MemoryMB.
	MemoryMB int

	// CPUs caps the CPU bandwidth of the whole tree, in CPUs (1.5 = one
	// and a half cores), through the cgroup's cpu.max; 0 leaves it
	// unlimited. Without a cgroup it is not enforced (the layer is then
	// reported missing).
	CPUs float64

	// MaxProcs caps the processes (and threads) of the script
	// (RLIMIT_NPROC inside the sandbox's user namespace); DefaultMaxProcs
	// when zero. Under a PID namespace the init process, one task, is
	// added to the limit, so the script gets MaxProcs.
	MaxProcs int

	// CPUSeconds caps the CPU time of each process of the script
	// (RLIMIT_CPU); when zero, one second more than the wall-time limit.
	CPUSeconds int

	// MaxEpollWatches caps the epoll_ctl(EPOLL_CTL_ADD) calls of a run
	// whose host uid others share (an unprivileged caller's run, a root
	// caller's that stays nobody): past it the call fails with ENOSPC.
	// The kernel counts epoll watches per host user only, so this count,
	// which never goes down, is what keeps one run from taking all of
	// them (see Result.SharedQuotas). DefaultEpollWatches when zero. A run
	// with a host uid of its own is not counted.
	MaxEpollWatches int

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

	// Module makes Run take its script argument as a Python module of the
	// skill's scripts package ("scripts.package_skill") and run it as
	// "python3 -m MODULE" with the skill folder as working directory, for
	// skills written as packages whose modules import each other
	// ("from scripts.utils import ..."). The module's file must lie in
	// scripts/ like any script. With Cwd or UseWorkDir the module runs
	// in that folder, still imported from the skill folder.
	Module bool

	// MaxOutput, when positive, caps the bytes streamed to Stdout and to
	// Stderr, each: the first byte past it is not streamed, the run is
	// killed, and Result.OutputExceeded names the stream. Zero streams
	// without limit.
	MaxOutput int64

	// UseWorkDir runs the script with a fresh per-run work folder as its
	// working directory instead of the skill's scripts/ folder. HOME and
	// TMPDIR always point to the work folder.
	UseWorkDir bool

	// KeepWorkDir keeps the work folder after the run (its path is in
	// Result.WorkDir) so outputs can be collected as artifacts.
	KeepWorkDir bool

	// ReadPaths are host files and folders the script may read, and
	// WritePaths host folders it may create, change and delete files in
	// (created when missing). Relative paths are resolved against the
	// caller's working directory, symlinks in them are resolved, and the
	// script sees each at the same absolute path as the host. Both the
	// mount namespace (bind mounts, read-only for ReadPaths) and Landlock
	// enforce them. "/" is refused, and the deny list (DefaultDenyPaths
	// plus DenyPaths) wins over every grant; see docs/grants.md.
	ReadPaths, WritePaths []string

	// Interpreters are programs of the caller's choice to run scripts
	// with, each an absolute path to an executable: a virtual
	// environment's bin/python, a pyenv, conda or nvm version's python3 or
	// node. Their folders come first on the sandbox's PATH, so a script
	// whose interpreter is python3 (by extension or shebang), and python3
	// started by a script, find the environment's before /usr/bin's; each
	// environment (the folder above bin/, and that of the program it links
	// to) is readable, as a ReadPaths entry would be, deny list included.
	Interpreters []string

	// NodeModules, when set, is a node_modules folder inside the
	// environment of one of Interpreters (a prepared Node environment,
	// package prepare): the script's NODE_PATH names it, and with a
	// mount namespace the sandbox's root holds /node_modules, a symlink
	// to it, where Node's search for a package ends, for require and
	// import alike. A node_modules of the skill's own, nearer the
	// script, comes first.
	NodeModules string

	// ReadOnlyPaths are files and folders inside WritePaths that the
	// script may read but not change (a policy's deny_write inside a write
	// grant): each is mounted read-only on itself. Each must exist (a
	// script could create a missing one). Entries outside every write
	// grant change nothing. Landlock cannot take access back from part of a
	// granted folder, so a run with ReadOnlyPaths inside a write grant is
	// refused without a mount namespace (ErrIsolation), AllowDegraded or
	// not. Linux only; elsewhere Run refuses them.
	ReadOnlyPaths []string

	// AutorunWritable are write grants (each named exactly as in
	// WritePaths) in which the files the caller's own tools run on their
	// own (.git, .envrc, .vscode, shell start-up files, ...: see
	// docs/grants.md) stay writable, for a script trusted to commit or
	// configure the project. In every other write grant the existing ones
	// are read-only (a Linux mount namespace; a run without one is
	// refused when any exists) and those the script creates are renamed
	// aside when the run is over.
	AutorunWritable []string

	// Cwd, when set, is the script's working directory instead of
	// scripts/ (or the work folder); it must lie inside a grant.
	Cwd string

	// DenyPaths adds entries to the built-in deny list (DefaultDenyPaths):
	// absolute paths, or "~/name" for that name in every home folder.
	DenyPaths []string

	// AllowDenied names paths exempt from the deny list: an entry of the
	// list equal to one of them is lifted, and a grant equal to one of them
	// may lie inside a denied folder. Only exact paths count, never
	// their parents or children.
	AllowDenied []string

	// WorkDirMB caps the total size of the work folder (DefaultWorkDirMB
	// when zero), with 64 inodes per MiB (at least 1024). When it is not
	// kept and there is a mount namespace, the sandbox gets a private
	// tmpfs of that size (memory, not disk) instead of the host folder.
	// A kept work folder, or one without a mount namespace, is a folder on
	// the host disk: the supervisor's watch (LayerWatch) then adds up its
	// size and inodes every few milliseconds and kills the run past the
	// cap (Result.LimitExceeded), so it can overshoot by what the run
	// writes in that time.
	WorkDirMB int

	// WriteMB caps how much the write grants (WritePaths, an MCP server's
	// workspace) may grow during the run, in MiB of disk blocks added over
	// all of them: DefaultWriteMB when zero. What a grant held before the
	// run does not count, and deleting files makes room. The watch
	// (LayerWatch) adds their size up every few tens of milliseconds and
	// kills the run past the cap (Result.LimitExceeded "write_bytes"), so
	// it can overshoot by what the run writes in that time; RLIMIT_FSIZE
	// still caps each file.
	WriteMB int

	// AllowDegraded opts into running with the isolation layers that
	// exist. By default (fail closed) Run refuses with ErrIsolation when a
	// layer is missing: a namespace (user, PID, mount, IPC, UTS, network),
	// Landlock, seccomp, the capability drop, no_new_privs, the rlimits or
	// the per-user kernel quotas (LayerQuotas).
	// The error names the missing layers, the cause (user namespaces
	// disabled by sysctl, by AppArmor, by a container's seccomp profile,
	// an old kernel, Landlock absent) and the fix. With AllowDegraded the
	// script runs, Result.Missing lists what is missing, and Warnings gets
	// one line per cause. A non-empty Disable implies AllowDegraded (the
	// caller asked for a weaker sandbox). landlock-net and landlock-scope
	// missing never refuse a run while the namespaces that do the same
	// job are in force (netns for TCP; netns and pidns for abstract
	// sockets and signals).
	//
	// AllowDegraded accepts a layer the host does not offer, never one
	// it offers whose construction failed part-way (a grant not bound, a
	// mask not mounted, a read-only lock or pivot_root refused, a
	// Landlock rule not added, the seccomp filter not loaded): such a run
	// is refused with ErrIsolation all the same (docs/security.md, "What
	// --allow-degraded may skip").
	AllowDegraded bool

	// RequireIsolation is stricter than the default: every missing layer
	// refuses the run, including disabled and covered ones. It may not be
	// combined with AllowDegraded.
	RequireIsolation bool

	// Stdin feeds the script's standard input; nil means /dev/null. A
	// folder (an *os.File open on one) is not passed: /dev/null instead.
	Stdin io.Reader

	// Stdout and Stderr receive the script's output as it is written; nil
	// discards it (it is still counted, hashed and captured up to OutputCap).
	Stdout, Stderr io.Writer

	// Warnings receives, when a run goes ahead without some layers, one
	// line per cause naming the missing layers, and, before the script
	// starts, one line per departure of the skill from the letter of the
	// specification it runs with (docs/skills.md); nil discards.
	Warnings io.Writer

	// NetworkLog receives one line per request the host allowlist's proxy
	// refused ("skill-sandbox: network: denied ..."); nil discards.
	NetworkLog io.Writer

	// RequestID, when set, is exported to the script as
	// SKILL_SANDBOX_REQUEST_ID.
	RequestID string

	// Strict makes validation warnings fail the run, as validate --strict.
	Strict bool

	// Pool, when set, supplies init processes started ahead of the run (see
	// NewPool); a run takes one when it fits, else starts its own.
	Pool *Pool

	// resolve and dial replace the proxy's resolver and dialer in tests
	// (see netproxy.Config); they are not reachable from the command line.
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	dial    func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)

	// sharedNobody runs a root caller's script as host nobody, shared
	// with every other such run, instead of an id of its own (see
	// hostIdentity): tests set it to show what that sharing allows.
	sharedNobody bool

	// Disable turns off single layers. It exists for tests that show an
	// attack succeeding without a layer and failing with it; a disabled
	// layer is reported in Result.Missing with the reason "disabled". A
	// run with disabled layers is a degraded run (see AllowDegraded).
	Disable []Layer

	// Backend chooses what runs the script: BackendNative ("" too), the
	// kernel sandbox, or BackendGVisor, gVisor's runsc with the same
	// plan (docs/backends.md says what its first cut lacks; runs it
	// cannot isolate as planned are refused).
	Backend string
	// BackendFallback lets a BackendGVisor run whose runsc is missing or
	// cannot start the sandbox here run under the native backend
	// instead, before its script started; Result.BackendFallback then
	// says why. Without it such a run is refused (fail closed). A run
	// the gvisor backend refuses for what it asks (the network, a root
	// caller's grants) is refused either way.
	BackendFallback bool
}

// The backends a Sandbox may choose.
const (
	BackendNative = plan.BackendNative
	BackendGVisor = plan.BackendGVisor
)

// request is s as the planning takes it (plan.Request): its fields, with
// the defaults applied to the zero limits.
func (s *Sandbox) request() *plan.Request {
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	return &plan.Request{
		SkillDir: s.SkillDir, Env: s.Env,
		AllowNetwork: s.AllowNetwork, AllowHosts: s.AllowHosts, DenyHosts: s.DenyHosts,
		AllowLocal: s.AllowLocal, AllowUnix: s.AllowUnix, Secrets: s.Secrets,
		Timeout:  timeout,
		MemoryMB: orDefault(s.MemoryMB, DefaultMemoryMB), CPUs: s.CPUs,
		MaxProcs: orDefault(s.MaxProcs, DefaultMaxProcs), CPUSeconds: s.CPUSeconds,
		MaxEpollWatches: s.MaxEpollWatches,
		MaxFileMB:       orDefault(s.MaxFileMB, DefaultMaxFileMB),
		MaxOpenFiles:    orDefault(s.MaxOpenFiles, DefaultMaxOpenFiles),
		OutputCap:       orDefault(s.OutputCap, DefaultOutputCap),
		Module:          s.Module, MaxOutput: s.MaxOutput,
		UseWorkDir: s.UseWorkDir, KeepWorkDir: s.KeepWorkDir,
		ReadPaths: s.ReadPaths, WritePaths: s.WritePaths, Interpreters: s.Interpreters,
		NodeModules: s.NodeModules, ReadOnlyPaths: s.ReadOnlyPaths, AutorunWritable: s.AutorunWritable,
		Cwd: s.Cwd, DenyPaths: s.DenyPaths, AllowDenied: s.AllowDenied,
		WorkDirMB: orDefault(s.WorkDirMB, DefaultWorkDirMB), WriteMB: orDefault(s.WriteMB, DefaultWriteMB),
		AllowDegraded: s.AllowDegraded, RequireIsolation: s.RequireIsolation, Strict: s.Strict,
		Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr, Warnings: s.Warnings, NetworkLog: s.NetworkLog,
		RequestID: s.RequestID, Disable: s.Disable,
		Backend: s.Backend, BackendFallback: s.BackendFallback,
		Pool: s.Pool.native(), Resolve: s.resolve, Dial: s.dial, SharedNobody: s.sharedNobody,
	}
}

// orDefault is v, or def when v is zero (a negative v is kept, for the
// planning to refuse).
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
