//go:build linux && (amd64 || arm64)

package native

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/initplan"
	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"github.com/skill-sandbox/skill-sandbox/run/internal/watch"

	"golang.org/x/sys/unix"
)

// The supervisor's side of the Linux init process (run/internal/initproc):
// a clone of this process that runs a program of system calls the
// supervisor compiles for the run (run/internal/initplan), without a Go
// runtime or a second program of its own.

// initProgram is a launch's program for the init process: the compile
// started ahead of the init process's start (see startCompile), the
// prefix a pooled init process ran ahead of its run, and the program
// sent (kept to read the init process's reports).
type initProgram struct {
	ahead    *pendingCompile
	prefix   *initplan.Prefix
	compiled *initplan.Plan
}

// startInit starts the init process in new namespaces. When user
// namespaces cannot be created (disabled by the caller, by sysctl, by a
// seccomp policy of a container, or their count is exhausted) it starts it
// without any namespace: every other namespace needs the user namespace
// when the caller is unprivileged, and a privileged caller must not keep
// host root. The missing namespaces are then reported and the remaining
// layers still apply.
func startInit(spec *launchSpec, l *Launch) (*started, error) {
	p := l.plan
	files, release, err := spec.fds()
	if err != nil {
		return nil, err
	}
	defer release()
	st := &started{}
	if stageconfig.Has(p.Namespaces, stageconfig.LayerUserNS) {
		var flags uintptr
		for _, l := range p.Namespaces {
			flags |= posix.CloneFlag(l)
		}
		if split, ok := startSplit(spec, l, files, flags); ok {
			return split, nil
		}
		at := nsAttr(flags, files, p.UID, p.GID)
		at.Name = InitName(p.RequestID)
		// Clone: the init process follows, in all of the run's
		// namespaces, as uid 0 of its user namespace (the host's p.UID).
		pid, err := initproc.Start(at)
		if err == nil {
			st.proc = posix.NewProcess(pid)
			st.namespaces = p.Namespaces
			st.pidns = stageconfig.Has(p.Namespaces, stageconfig.LayerPIDNS)
			posix.EnableSubreaper(st.pidns)
			return st, nil
		}
		if !posix.UserNSRefused(err) {
			return nil, err
		}
		reason := posix.UserNSCause(err, posix.ReadHostFacts("/proc"))
		for _, l := range withUserNS(p) {
			st.missing = append(st.missing, stageconfig.Missing{Layer: l, Reason: reason})
		}
	} else {
		for _, l := range withUserNS(p) {
			st.missing = append(st.missing, stageconfig.Missing{Layer: l, Reason: "needs the user namespace, which is disabled"})
		}
	}
	// Clone: the init process follows, in no namespace, as the
	// supervisor's uid (it drops to p.UID itself: see initplan).
	pid, err := initproc.Start(&initproc.Attr{Files: files, ReportFD: stageconfig.ReportFD, Name: InitName(p.RequestID)})
	if err != nil {
		return nil, err
	}
	st.proc = posix.NewProcess(pid)
	posix.EnableSubreaper(false)
	return st, nil
}

// withUserNS lists the layers that go missing with the user namespace, for
// one reason: the namespaces, and the quotas (set in it) when the run
// wants them.
func withUserNS(p *backend.Spec) []stageconfig.Layer {
	out := append([]stageconfig.Layer(nil), p.Namespaces...)
	if stageconfig.Has(p.Config.Layers, stageconfig.LayerQuotas) {
		out = append(out, stageconfig.LayerQuotas)
	}
	return out
}

// unshareWait bounds startSplit's wait for the init process's namespaces
// (about half a millisecond; a machine swapping hard may take seconds):
// past it the run starts the way it did before.
const unshareWait = 10 * time.Second

// splitFlags are the namespaces an init process of the run's own makes
// itself (see startSplit).
const splitFlags = unix.CLONE_NEWNS | unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS

// startSplit clones the init process into its user and PID namespaces
// alone: it makes the others itself (initproc's Attr.Unshare), on the
// other core, while the supervisor compiles its program here (see
// startCompile), each about half a millisecond; a network namespace is
// most of a clone's cost. A new process lands on the idle core, which a
// goroutine woken for the compile did not reliably do (2 cores, a VM).
// ok is false when it cannot be had: no report pipe to hear the init
// process on (a pooled one), no namespace to split, or the clone or the
// unshare refused. The caller then clones as before, and reports what it
// cannot have as before; an init process whose unshare failed has ended
// and is reaped here.
func startSplit(spec *launchSpec, l *Launch, files []int, flags uintptr) (*started, bool) {
	p := l.plan
	later := flags & splitFlags
	if spec.report == nil || later == 0 {
		return nil, false
	}
	at := nsAttr(flags&^later, files, p.UID, p.GID)
	at.Name = InitName(p.RequestID)
	at.Unshare = later
	// Clone: the init process follows, in the run's user and PID
	// namespaces, as uid 0 of its user namespace (the host's p.UID);
	// it unshares the others itself.
	pid, err := initproc.Start(at)
	if err != nil {
		return nil, false
	}
	proc := posix.NewProcess(pid)
	l.program.ahead.compileNow()
	if err := initproc.ReadUnshared(spec.report, pid, unshareWait); err != nil {
		proc.Kill()
		proc.Wait()
		return nil, false
	}
	st := &started{proc: proc, namespaces: p.Namespaces, pidns: stageconfig.Has(p.Namespaces, stageconfig.LayerPIDNS)}
	posix.EnableSubreaper(st.pidns)
	return st, true
}

// InitName is the name (comm) of the init process of the run id: "ss-"
// and the id's first twelve characters, for people reading ps.
func InitName(id string) string {
	if len(id) > 12 {
		id = id[:12]
	}
	return "ss-" + id
}

// pooledName is the name of an init process waiting in a pool.
const pooledName = "ss-pooled"

// nsAttr clones into the namespaces of flags. The namespace's uid 0 maps
// to uid (the caller, or nobody when the caller is root, see
// sandboxIdentity); a root caller's init process then becomes that uid 0
// and drops its supplementary groups (see initplan's credentials), which
// setgroups "allow" permits: root writes gid_map with CAP_SETGID in the
// parent namespace. A root caller that keeps its own uid (a namespace
// without nobody) leaves setgroups denied, as its parent may have it.
func nsAttr(flags uintptr, files []int, uid, gid int) *initproc.Attr {
	return &initproc.Attr{
		Cloneflags:     flags,
		Files:          files,
		UIDMap:         fmt.Sprintf("0 %d 1\n", uid),
		GIDMap:         fmt.Sprintf("0 %d 1\n", gid),
		SetgroupsAllow: identity.DropsToNobody(uid),
		ReportFD:       stageconfig.ReportFD,
	}
}

// fds lists the descriptors the init process gets at 0, 1, 2 and on:
// stdin (/dev/null when there is none), stdout, stderr, then extra.
// release closes what fds opened.
func (s *launchSpec) fds() (files []int, release func(), err error) {
	release = func() {}
	stdin := -1
	switch f := s.stdin.(type) {
	case *os.File:
		stdin = int(f.Fd())
	case nil:
		null, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, nil, err
		}
		stdin, release = null, func() { unix.Close(null) }
	default:
		return nil, nil, fmt.Errorf("stdin of type %T", s.stdin)
	}
	files = []int{stdin, int(s.stdout.Fd()), int(s.stderr.Fd())}
	for _, f := range s.extra {
		fd := -1 // an empty slot
		if f != nil {
			fd = int(f.Fd())
		}
		files = append(files, fd)
	}
	return files, release, nil
}

// sendStage compiles the run's config, now that the namespaces the init
// process has are known (l.cfg.Namespaces), and sends the program. The
// init process waits for the go-ahead, when the config asks for one,
// also when a layer is already known to be missing. The compile started
// ahead (startCompile) is taken when it guessed right.
func sendStage(w io.Writer, l *Launch) error {
	in := stageInput(l, &l.cfg, l.knownMissing)
	prog, err := l.program.ahead.result(in)
	if prog == nil && err == nil {
		prog, err = initplan.Compile(in)
	}
	if err != nil {
		return err
	}
	l.program.compiled = prog
	_, err = w.Write(prog.Bytes())
	return err
}

// stageInput is what the program of launch l is compiled from, with cfg
// as its config and knownMissing as l.knownMissing.
func stageInput(l *Launch, cfg *stageconfig.Config, knownMissing bool) initplan.Input {
	p := l.plan
	return initplan.Input{
		Config:         cfg,
		RootCaller:     identity.DropsToNobody(p.UID),
		HostUID:        p.UID,
		HostGID:        p.GID,
		GrantFolders:   grantFolders(p),
		Name:           InitName(p.RequestID),
		Prefix:         l.program.prefix,
		KnownMissing:   knownMissing,
		MakeWorkDir:    !l.workMade,
		MayRunDegraded: backend.DegradedByChoice(p),
		JoinCgroup:     l.lateCgroup.TasksFiles(),
	}
}

// pendingCompile is a compile started ahead, done by whichever comes to
// it first: the goroutine startCompile starts, or the supervisor when it
// needs the program (result). The goroutine is only a guess that the
// other core is free: the scheduler can leave it waiting behind the
// supervisor's thread for a millisecond or more while that core idles,
// and the init process would then wait for its program that long.
type pendingCompile struct {
	// in is what it compiles, from its own deep copy of the config
	// (decoded from enc), so that nothing the supervisor changes in its
	// config meanwhile reaches the compile; enc is the config's
	// encoding, which result compares.
	in      initplan.Input
	enc     []byte
	claimed atomic.Bool   // set by whoever compiles
	done    chan struct{} // closed once plan and err are set
	plan    *initplan.Plan
	err     error
}

// compileNow compiles a here, unless its goroutine has started (or there
// is none to compile).
func (a *pendingCompile) compileNow() {
	if a != nil {
		a.compile()
	}
}

// compile compiles a, unless someone else has claimed it.
func (a *pendingCompile) compile() {
	if !a.claimed.CompareAndSwap(false, true) {
		return
	}
	a.plan, a.err = initplan.Compile(a.in)
	close(a.done)
}

// startCompile prepares compiling the run's program on the guess that
// the start goes as planned: every namespace of the spec's Namespaces, the cgroup
// unless disabled, and the relaxed RLIMIT_AS unless neither the cgroup nor
// the watch may hold the memory. sendStage takes the
// result when the guess holds, and compiles again otherwise. With aside,
// the compile starts at once on another goroutine, while the supervisor
// makes the run's cgroup and clones the init process (a pooled one, see
// Pool); else startSplit does it while the init process makes its
// namespaces, and sendStage when that did not happen.
func startCompile(l *Launch, aside bool) {
	p := l.plan
	guess := plannedConfig(l)
	enc, err := stageconfig.Encode(nil, &guess)
	cfg := new(stageconfig.Config)
	if err != nil || stageconfig.Decode(enc, cfg) != nil {
		return
	}
	a := &pendingCompile{in: stageInput(l, cfg, p.Strict && len(p.Disabled) > 0), enc: enc, done: make(chan struct{})}
	if aside {
		go a.compile()
	}
	l.program.ahead = a
}

// plannedConfig is l's config as the start plans it: every namespace
// of the spec's Namespaces, the cgroup unless disabled, and the relaxed
// RLIMIT_AS unless neither the cgroup nor the watch may hold the memory.
func plannedConfig(l *Launch) stageconfig.Config {
	p := l.plan
	cfg := l.cfg
	cfg.Namespaces = p.Namespaces
	if !stageconfig.Has(p.Disabled, stageconfig.LayerCgroup) {
		cfg.MemoryCgroup = true
	}
	if !stageconfig.Has(p.Disabled, stageconfig.LayerCgroup) || !stageconfig.Has(p.Disabled, stageconfig.LayerWatch) {
		cfg.Limits.AddressSpace = relaxedAddressSpace(p) // see relaxAddressSpace
	}
	return cfg
}

// result returns the program compiled ahead if it was compiled from in
// (the same config, by its encoding, and the same other inputs), else
// nothing.
func (a *pendingCompile) result(in initplan.Input) (*initplan.Plan, error) {
	if a == nil {
		return nil, nil
	}
	a.compile()
	<-a.done
	enc, err := stageconfig.Encode(nil, in.Config)
	if err != nil || !bytes.Equal(enc, a.enc) {
		return nil, nil
	}
	ahead := a.in
	ahead.Config, in.Config = nil, nil
	if !reflect.DeepEqual(ahead, in) {
		return nil, nil
	}
	return a.plan, a.err
}

// readStageReport reads the init process's layer report (initproc.Report)
// and says whether it waits for the go-ahead.
func readStageReport(rd *bufio.Reader, l *Launch) (stageconfig.Report, bool, error) {
	var r initproc.Report
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&r)), unsafe.Sizeof(r))
	if n, err := io.ReadFull(rd, buf); err != nil {
		if n == 0 {
			err = io.EOF
		}
		return stageconfig.Report{}, false, err
	}
	if !r.Valid() {
		return stageconfig.Report{}, false, errors.New("malformed layer report")
	}
	return l.program.compiled.Report(r), r.Waiting == 1, nil
}

// readStageAfter reads what follows the layer report: nothing (ok) once
// execve succeeded (the report descriptor is close-on-exec), else the exec
// error (initproc.ExecError).
func readStageAfter(rd *bufio.Reader, l *Launch) (ok bool, execErr string, err error) {
	var e initproc.ExecError
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&e)), unsafe.Sizeof(e))
	n, err := io.ReadFull(rd, buf)
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		return true, "", nil
	case err != nil:
		return false, "", fmt.Errorf("reading the exec report: %v", err)
	case !e.Valid():
		return false, "", errors.New("malformed exec report")
	}
	return false, l.program.compiled.ExecError(e), nil
}

// stageReady reads what a pooled init process sends on its report
// descriptor once its prefix has run: initproc's Ready, or the report of
// the prefix's failure.
func stageReady(r io.Reader) bool {
	var msg initproc.Ready
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&msg)), unsafe.Sizeof(msg))
	_, err := io.ReadFull(r, buf)
	return err == nil && msg.Magic == initproc.ReadyMagic
}

// grantFolders says, for each grant, whether it is a folder: the handed-
// over tree, or the path (a file changed since is caught by the init
// process's check of its device and inode, or by its mount failing).
func grantFolders(p *backend.Spec) []bool {
	out := make([]bool, len(p.Config.Grants))
	for i, g := range p.Config.Grants {
		var st unix.Stat_t
		var err error
		if j := g.Tree - stageconfig.FirstTreeFD; g.Tree != 0 && j >= 0 && j < len(p.ExtraFiles) {
			err = unix.Fstat(int(p.ExtraFiles[j].Fd()), &st)
		} else {
			err = unix.Stat(g.Path, &st)
		}
		out[i] = err != nil || st.Mode&unix.S_IFMT == unix.S_IFDIR
	}
	return out
}

// startPooledProcess starts a pooled init process of shape, in its
// namespaces, and sends it the prefix it runs while it waits for a run's
// descriptors and program (see Pool and initplan's CompilePrefix). It
// returns the process's PID namespace link too (see started.pidNSLink),
// read before the prefix is sent, "" without a PID namespace. The prefix
// is returned as the program its run starts from.
func startPooledProcess(spec *launchSpec, shape Shape, config io.Writer) (*posix.Process, initProgram, string, error) {
	files, release, err := spec.fds()
	if err != nil {
		return nil, initProgram{}, "", err
	}
	defer release()
	var flags uintptr
	for _, l := range shape.WantNS {
		flags |= posix.CloneFlag(l)
	}
	// Compiled first: written at once, the prefix runs as soon as the
	// process can.
	pre, err := initplan.CompilePrefix(initplan.PoolShape{
		Namespaces: shape.WantNS, AllowNetwork: shape.AllowNetwork,
		RootCaller: identity.DropsToNobody(shape.UID), HostUID: shape.UID, HostGID: shape.GID,
	})
	if err != nil {
		return nil, initProgram{}, "", fmt.Errorf("the pooled init process's prefix: %w", err)
	}
	at := nsAttr(flags, files, shape.UID, shape.GID)
	at.Name = pooledName
	// Clone: a pooled init process follows, in the pool's namespaces, as
	// uid 0 of its user namespace (the host's shape.UID).
	pid, err := initproc.Start(at)
	if err != nil {
		return nil, initProgram{}, "", err
	}
	proc := posix.NewProcess(pid)
	var pidNS string
	if stageconfig.Has(shape.WantNS, stageconfig.LayerPIDNS) {
		pidNS = watch.PIDNSLink(pid)
	}
	_, err = config.Write(pre.Bytes())
	if err != nil {
		proc.Kill()
		proc.Wait()
		return nil, initProgram{}, "", fmt.Errorf("the pooled init process's prefix: %w", err)
	}
	return proc, initProgram{prefix: pre}, pidNS, nil
}
