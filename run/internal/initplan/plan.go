//go:build linux && (amd64 || arm64)

package initplan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// Input is what Compile needs besides the config.
type Input struct {
	// Config is the run's config, with Namespaces set to those clone(2)
	// created.
	Config *stageconfig.Config
	// RootCaller: the supervisor runs as root, so the init process drops
	// its supplementary groups and becomes uid and gid 0 of its user
	// namespace (mapped to HostUID and HostGID, nobody), or without a
	// user namespace HostUID and HostGID themselves.
	RootCaller       bool
	HostUID, HostGID int
	// GrantFolders says, for each of Config.Grants, whether it is a
	// folder (else a file).
	GrantFolders []bool
	// MayRunDegraded: the run goes on when a layer is missing
	// (AllowDegraded, or layers the caller disabled), so the program
	// must also hold what a run without the mount or network namespace
	// needs (the seccomp filter of that case).
	MayRunDegraded bool
	// MakeWorkDir: Config.WorkDir was named but not made on the host,
	// since the mount namespace makes it inside the sandbox's root; the
	// init process makes it on the host when that layer is not applied.
	MakeWorkDir bool
	// Name is the init process's name for the run (see initproc's
	// Attr.Name), set first thing: a pooled one gets it when it takes
	// the run.
	Name string
	// Prefix is what the pooled init process that takes the run ran
	// ahead (see CompilePrefix); nil for an init process of the run's
	// own.
	Prefix *Prefix
	// KnownMissing: the supervisor already knows of a layer missing
	// (a namespace clone(2) could not create, the cgroup), so when the
	// config asks for the go-ahead the init process waits for it in any
	// case.
	KnownMissing bool
	// JoinCgroup are the "tasks" files of the run's cgroup v1 cgroups,
	// which the supervisor makes once it has sent the program, while the
	// init process builds the sandbox, and whose descriptors it then
	// sends on the config socket: the init process joins them before the
	// script starts (see joinCgroup). None when it is born inside them,
	// or has no cgroup.
	JoinCgroup []string
}

// Plan is a compiled program and what the supervisor needs to read the
// init process's report on it.
type Plan struct {
	prog *initproc.Program
	// changed holds, by operation, the message of a swap it detects.
	changed map[int]string
	// missing are the layers the compiler found the kernel lacks (no
	// Landlock, or an ABI without a kind of rule).
	missing []stageconfig.Missing
	// dirName is the script's working folder, for ExecError.
	dirName string
	// prebuilt: the run's root is the one its pooled init process built
	// ahead (the report says so, see run's PoolStats.Prebuilt).
	prebuilt bool
	// steps are the program's listing (see Describe); nil unless asked.
	steps []step
}

// Bytes is the program as sent to the init process.
func (p *Plan) Bytes() []byte { return p.prog.Bytes }

// layerOrder lists the layers the init process builds, in the order they
// are applied; a layer's bit is 1 << its index.
var layerOrder = [...]stageconfig.Layer{
	stageconfig.LayerUserNS, stageconfig.LayerPIDNS, stageconfig.LayerMountNS,
	stageconfig.LayerIPCNS, stageconfig.LayerUTSNS, stageconfig.LayerNetNS,
	stageconfig.LayerRlimits, stageconfig.LayerQuotas, stageconfig.LayerCaps, stageconfig.LayerNoNewPrivs,
	stageconfig.LayerLandlockFS, stageconfig.LayerLandlockNet, stageconfig.LayerLandlockScope,
	stageconfig.LayerSeccomp,
}

// bit is the bit of layer l (0 for a layer the init process does not
// build).
func bit(l stageconfig.Layer) uint32 {
	for i, x := range layerOrder {
		if x == l {
			return 1 << i
		}
	}
	return 0
}

// layersOf lists the layers of bits, in order.
func layersOf(bits uint32) []stageconfig.Layer {
	var out []stageconfig.Layer
	for i, l := range layerOrder {
		if bits&(1<<i) != 0 {
			out = append(out, l)
		}
	}
	return out
}

// compiler holds what the steps share while they emit a program.
type compiler struct {
	b   *initproc.Builder
	cfg *stageconfig.Config
	in  Input
	pf  *procFacts
	// changed is Plan.changed; missing is Plan.missing.
	changed map[int]string
	missing []stageconfig.Missing
	// statBuf is a struct stat, fdBuf the path of a descriptor, in the
	// data. The registers: tmp and tmp2 are scratch within one helper;
	// fd holds the descriptor a step opens, uses and closes, dir the
	// folder openBeneath opens from, tree a detached mount, top a device
	// number, null /dev/null's descriptor for the masks.
	statBuf, fdBuf                initproc.Data
	tmp, tmp2, fd, dir, tree, top initproc.Register
	null                          initproc.Register
	// etcListed holds the names and types of the host's /etc, listed
	// once (listDir) for the masks, the Landlock rules and etc, the paths
	// of etcReadable found there (etcMatches), which the Landlock rules of
	// a run without a mount namespace grant one by one. etcTargets are
	// etcLinkTargets'.
	etcListed  map[string]uint8
	etc        []string
	etcTargets []string
	// prebuiltRoot: setupMounts used the root a pooled prefix built;
	// prefixDiscarded: it detached it, as it did not fit the run.
	prebuiltRoot, prefixDiscarded bool
	// listing: note the steps in steps (see Describe); noteLayer,
	// noteCond and noteHost are the layer, condition and host group of
	// the steps noted now.
	listing                       bool
	steps                         []step
	noteLayer, noteCond, noteHost string
}

// Compile compiles in.Config into the init process's program.
func Compile(in Input) (*Plan, error) {
	if err := checkInput(in); err != nil {
		return nil, err
	}
	return newCompiler(in).compile()
}

// checkInput refuses an input Compile cannot compile.
func checkInput(in Input) error {
	if len(in.Config.Argv) == 0 {
		return errors.New("config has no command")
	}
	if pre := in.Prefix; pre != nil && !slices.Equal(pre.shape.Namespaces, in.Config.Namespaces) {
		return errNoPrefix
	}
	return nil
}

// compile emits the whole program, in the order of the layers.
func (c *compiler) compile() (*Plan, error) {
	cfg, in, pre := c.cfg, c.in, c.in.Prefix
	if in.Name != "" {
		var name [16]byte
		copy(name[:15], in.Name)
		c.note("name", in.Name)
		c.b.Sys("name", unix.SYS_PRCTL, []initproc.Arg{imm(unix.PR_SET_NAME), initproc.Ref(c.b.Bytes(name[:]))}, initproc.IgnoreErrors())
	}
	oom := initproc.Int(-1)
	switch {
	case pre != nil && pre.oom:
		oom = initproc.Reg(regOOM)
	case pre == nil && c.pidNS():
		oom = initproc.Reg(c.openOOMScore())
	}
	if pre == nil {
		c.notDumpable()
		c.credentials()
	}
	c.step(stageconfig.LayerUserNS, func() {})
	c.step(stageconfig.LayerPIDNS, c.checkPIDNS)
	c.capQuotas()
	c.step(stageconfig.LayerMountNS, c.setupMounts)
	if in.MakeWorkDir {
		c.makeHostWorkDir()
	}
	c.step(stageconfig.LayerIPCNS, func() {})
	c.step(stageconfig.LayerUTSNS, c.setHostname)
	c.pinCPUs()
	c.cgroupNS()
	c.step(stageconfig.LayerNetNS, c.setupNetNS)
	c.step(stageconfig.LayerRlimits, c.applyRlimits)
	c.step(stageconfig.LayerCaps, c.dropCapabilities)
	c.step(stageconfig.LayerNoNewPrivs, c.setNoNewPrivs)
	c.joinCgroup()
	c.applyLandlock()
	c.installSeccomp()
	wait := uint32(initproc.WaitNever)
	switch {
	case cfg.WaitForGo && (in.KnownMissing || len(c.missing) > 0):
		wait = initproc.WaitAlways
	case cfg.WaitForGo:
		wait = initproc.WaitIfMissing
	}
	c.noteReport(wait)
	c.b.Report(stageconfig.ReportFD, stageconfig.ConfigFD, wait)
	c.launch(oom)
	prog, err := c.b.Finish()
	if err != nil {
		return nil, err
	}
	return &Plan{prog: prog, changed: c.changed, missing: c.missing, dirName: cfg.Dir, prebuilt: c.prebuiltRoot, steps: c.steps}, nil
}

// newCompiler starts a program for in.
func newCompiler(in Input) *compiler {
	c := &compiler{
		b: initproc.NewBuilder(firstFree), cfg: in.Config, in: in, pf: processFacts(),
		changed: map[int]string{}, etcListed: listDir("/etc"), etcTargets: etcLinkTargets(in.Config.AllowNetwork),
	}
	c.etc = etcMatches(c.etcListed, in.Config.AllowNetwork)
	c.statBuf = c.b.Zero(int(unsafe.Sizeof(unix.Stat_t{})))
	c.fdBuf = c.b.Zero(32)
	for _, r := range []*initproc.Register{&c.tmp, &c.tmp2, &c.fd, &c.dir, &c.tree, &c.top, &c.null} {
		*r = c.b.NewReg()
	}
	return c
}

// etcReader is the identity the run's processes have on the host (see
// Input.RootCaller).
func (c *compiler) etcReader() etcReader {
	return etcReader{rootCaller: c.in.RootCaller, uid: c.in.HostUID, gid: c.in.HostGID}
}

// wants reports whether the init process builds layer l: a namespace
// clone(2) created, or a layer the config asks for.
func (c *compiler) wants(l stageconfig.Layer) bool {
	return stageconfig.Has(c.cfg.Layers, l) || stageconfig.Has(c.cfg.Namespaces, l)
}

// pidNS reports whether the init process is PID 1 of a new PID namespace:
// it then stays, as the run's reaper (initproc's Reaper).
func (c *compiler) pidNS() bool { return stageconfig.Has(c.cfg.Namespaces, stageconfig.LayerPIDNS) }

// step emits layer l's block, when the init process builds it: emit's
// operations, whose failure is the layer's (see initproc.Builder.Begin).
func (c *compiler) step(l stageconfig.Layer, emit func()) {
	if !c.wants(l) {
		return
	}
	c.b.Begin(bit(l))
	c.noteLayer = string(l)
	emit()
	c.noteLayer = ""
	c.b.End()
}

// notDumpable makes the init process not dumpable, before it does anything
// of the run. Its memory belongs to the supervisor's user namespace (the
// fork copied the supervisor's mm), so from then on only a process with
// CAP_SYS_PTRACE there reaches its /proc files (fd, mem, ns links) or
// ptraces it: no longer an unprivileged caller's other processes, a
// concurrent run's script among them, while the init process holds the
// supervisor's home cgroup tasks descriptors (stageconfig.HomeTasksFD) and
// the run's descriptors. A root caller's becomes so anyway when it changes
// its identity (credentials); the reaper sets it again. Not earlier: the
// supervisor writes the ID maps through /proc before it sends the program,
// and openOOMScore opens /proc/self/oom_score_adj first. prctl cannot fail
// here, so a failure ends the start like any other step's.
func (c *compiler) notDumpable() {
	c.note("not dumpable")
	c.b.Sys("prctl(PR_SET_DUMPABLE, 0)", unix.SYS_PRCTL, []initproc.Arg{initproc.Imm(unix.PR_SET_DUMPABLE), initproc.Imm(0), initproc.Imm(0), initproc.Imm(0), initproc.Imm(0)})
}

// credentials makes the init process uid and gid 0 of its user namespace,
// without supplementary groups, when the caller is root (the namespace's
// 0 is nobody on the host); without a user namespace it becomes nobody
// itself. An unprivileged caller's identity is mapped as it is.
func (c *compiler) credentials() {
	if !c.in.RootCaller {
		return
	}
	uid, gid := 0, 0
	if !stageconfig.Has(c.cfg.Namespaces, stageconfig.LayerUserNS) {
		uid, gid = c.in.HostUID, c.in.HostGID
	}
	if c.listing {
		c.notef("identity uid %d gid %d, no supplementary groups", uid, gid)
	}
	c.b.Sys("setgroups", unix.SYS_SETGROUPS, []initproc.Arg{initproc.Imm(0), initproc.Imm(0)})
	c.b.Sys(fmt.Sprintf("setresgid %d", gid), unix.SYS_SETRESGID, []initproc.Arg{initproc.Int(gid), initproc.Int(gid), initproc.Int(gid)})
	c.b.Sys(fmt.Sprintf("setresuid %d", uid), unix.SYS_SETRESUID, []initproc.Arg{initproc.Int(uid), initproc.Int(uid), initproc.Int(uid)})
}

// checkPIDNS confirms that the init process is PID 1 of a new PID
// namespace: it then stays PID 1 as the reaper, the kernel kills every
// process of the run when it exits after the script, and no host process
// can be signalled.
func (c *compiler) checkPIDNS() {
	c.note("check: PID 1 of a new PID namespace")
	c.b.Sys("getpid", unix.SYS_GETPID, nil, initproc.Into(c.tmp))
	c.b.Assert("not PID 1 of a new PID namespace", initproc.Eq, initproc.Reg(c.tmp), initproc.Imm(1), false)
}

// sandboxHostname replaces the host's name inside the UTS namespace.
const sandboxHostname = stageconfig.SandboxHostname

// setHostname hides the host name: the UTS namespace starts as a copy of
// the host's. A refusal of sethostname changes nothing: the layer is then
// as absent as on a host without it.
func (c *compiler) setHostname() {
	c.note("hostname", sandboxHostname, "(domain name \"(none)\")")
	name := c.b.String(sandboxHostname)
	c.b.Sys("sethostname", unix.SYS_SETHOSTNAME, []initproc.Arg{initproc.Ref(name), initproc.Imm(uint64(len(sandboxHostname)))},
		initproc.Unavailable(unix.EPERM, unix.EACCES, unix.ENOSYS))
	none := c.b.String("(none)")
	c.b.Sys("setdomainname", unix.SYS_SETDOMAINNAME, []initproc.Arg{initproc.Ref(none), initproc.Imm(6)}, initproc.IgnoreErrors())
}

// setNoNewPrivs sets PR_SET_NO_NEW_PRIVS: execve can no longer grant
// privileges (setuid/setgid bits, file capabilities), and an unprivileged
// process may install Landlock and seccomp filters. It fails only where
// the kernel lacks it (EINVAL before Linux 3.5): a layer not offered.
func (c *compiler) setNoNewPrivs() {
	c.note("no_new_privs")
	c.b.Sys("prctl(PR_SET_NO_NEW_PRIVS)", unix.SYS_PRCTL, []initproc.Arg{initproc.Imm(unix.PR_SET_NO_NEW_PRIVS), initproc.Imm(1), initproc.Imm(0), initproc.Imm(0), initproc.Imm(0)},
		initproc.UnavailableAny())
}

// openOOMScore opens the init process's own oom_score_adj for the reaper
// (see initproc's Reaper); the register holds -1 when it cannot. First
// thing, through the host's /proc: once a root caller's init process has
// changed its identity it is not dumpable, and its /proc files then belong
// to the host's root (the fork kept the supervisor's memory, whose user
// namespace is the host's), not to it; later, Landlock makes /proc
// read-only.
func (c *compiler) openOOMScore() initproc.Register {
	r := regOOM
	c.b.Store(c.statBuf, 8, initproc.Int(-1))
	c.b.Load(r, c.statBuf, 8)
	c.b.Sys("open /proc/self/oom_score_adj", unix.SYS_OPENAT,
		[]initproc.Arg{initproc.Int(unix.AT_FDCWD), initproc.Ref(c.b.String("/proc/self/oom_score_adj")), initproc.Imm(unix.O_WRONLY | unix.O_CLOEXEC)},
		initproc.Into(r), initproc.IgnoreErrors())
	return r
}

// launch ends the program: the script executed in place of the init
// process, or under a PID namespace started by it as the reaper.
func (c *compiler) launch(oom initproc.Arg) {
	cfg := c.cfg
	l := initproc.Launch{
		Argv: cfg.Argv, Env: cfg.Env, Dir: cfg.Dir, ReportFD: stageconfig.ReportFD,
	}
	limits := stageconfig.Has(cfg.Layers, stageconfig.LayerRlimits)
	if limits {
		l.AddressSpace = withinHardLimit(unix.RLIMIT_AS, cfg.Limits.AddressSpace)
	}
	if !c.pidNS() {
		c.noteLaunch("exec", l)
		c.b.Exec(l)
		return
	}
	// As PID 1 the reaper counts against RLIMIT_NPROC with the script
	// (the namespace's uid 0), and must not run out of CPU time: both
	// are the script's alone.
	if limits {
		l.CPUSeconds = withinHardLimit(unix.RLIMIT_CPU, cfg.Limits.CPUSeconds)
		if cfg.Limits.Procs > 0 && stageconfig.NprocIsPerRun() {
			l.Procs = withinHardLimit(unix.RLIMIT_NPROC, cfg.Limits.Procs+1)
		}
	}
	c.noteLaunch("start the script under the init process, which reaps:", l)
	c.b.Reaper(l, stageconfig.StatusFD, stageconfig.ConfigFD, oom)
}

// noteLaunch notes how the script starts: how, its argument vector,
// working folder and the limits set on it alone (its environment is left
// out: it may hold what the caller passed).
func (c *compiler) noteLaunch(how string, l initproc.Launch) {
	if !c.listing {
		return
	}
	text := fmt.Sprintf("%s %s (in %s, %d environment variables)", how, strings.Join(l.Argv, " "), l.Dir, len(l.Env))
	for _, lim := range []struct {
		name string
		v    uint64
	}{{"AS", l.AddressSpace}, {"CPU", l.CPUSeconds}, {"NPROC", l.Procs}} {
		if lim.v != 0 {
			text += fmt.Sprintf(", rlimit %s %d", lim.name, lim.v)
		}
	}
	c.note(text)
}

// noteReport notes the report and the wait for the go-ahead.
func (c *compiler) noteReport(wait uint32) {
	switch wait {
	case initproc.WaitAlways:
		c.note("report the layers; wait for the supervisor's go-ahead")
	case initproc.WaitIfMissing:
		c.note("report the layers; wait for the supervisor's go-ahead if one is missing")
	default:
		c.note("report the layers")
	}
}

// withinHardLimit returns v, or this process's hard limit for resource if
// that is lower: an unprivileged process cannot raise it, and the init
// process inherits the same. 0 stays 0 (not set).
func withinHardLimit(resource int, v uint64) uint64 {
	if v == 0 {
		return 0
	}
	var cur unix.Rlimit
	if err := unix.Getrlimit(resource, &cur); err == nil && cur.Max < v {
		return cur.Max
	}
	return v
}
