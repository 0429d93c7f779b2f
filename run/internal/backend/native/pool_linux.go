package native

import (
	"errors"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// Pooled is an init process waiting in a pool: cloned into its
// namespaces, mapped, blocked reading its config socket.
type Pooled struct {
	proc *posix.Process
	born time.Time
	// cg is the init process's cgroup, which it was born in (see
	// cgroup.Cgroup.StartInside), with no limits until a run sets its own;
	// nil when none could be had (the run then moves the init process into
	// one of its own).
	cg *cgroup.Cgroup
	// The supervisor's ends: the config socket (a stream socket, so that
	// descriptors can travel with the first byte) and the pipes.
	cfgW, repR, outR, errR, statusR *os.File
	// program holds the prefix the init process runs while it waits
	// (see initplan.CompilePrefix), which its run's program builds on.
	program initProgram
	// pidNS is the init process's PID namespace link, read before its prefix
	// made it not dumpable (see started.pidNSLink).
	pidNS string
	// id is the init process's own host id (see Shape.OwnIDs), held until
	// the init process is killed unused or a run reserves it (and the id with
	// it); nil otherwise.
	id *identity.RunID
}

// startPooled starts an init process of the given shape with no run yet:
// stdin is /dev/null until a run hands over its own, and the config
// descriptor is a socket instead of a pipe.
func startPooled(shape Shape) (*Pooled, error) {
	var files []*os.File
	var id *identity.RunID
	fail := func(err error) (*Pooled, error) {
		for _, f := range files {
			f.Close()
		}
		id.Release()
		return nil, err
	}
	if shape.OwnIDs {
		var err error
		if id, err = identity.Take(identity.LockBase); err != nil {
			return fail(err)
		}
		shape.UID, shape.GID = id.ID, id.ID
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %v", err)
	}
	cfgW, cfgR := os.NewFile(uintptr(fds[0]), "config"), os.NewFile(uintptr(fds[1]), "config-init")
	files = append(files, cfgW, cfgR)
	pipes := make([]*os.File, 0, 8)
	for i := 0; i < 4; i++ {
		r, w, err := posix.Pipe(false)
		if err != nil {
			return fail(err)
		}
		files = append(files, r, w)
		pipes = append(pipes, r, w)
	}
	repR, repW, outR, outW, errR, errW, statusR, statusW := pipes[0], pipes[1], pipes[2], pipes[3], pipes[4], pipes[5], pipes[6], pipes[7]
	if err := posix.ChownOutput(shape.UID, shape.GID, outW, errW); err != nil {
		return fail(err)
	}
	spec := &launchSpec{name: "pooled", stdout: outW, stderr: errW, extra: append([]*os.File{cfgR, repW, statusW}, make([]*os.File, stageconfig.HomeTasksSlots)...)}
	var proc *posix.Process
	var program initProgram
	var pidNS string
	start := func() (err error) {
		proc, program, pidNS, err = startPooledProcess(spec, shape, cfgW)
		return err
	}
	cg := poolCgroup(shape)
	if cg != nil {
		var inside bool
		closeHome := cg.PassHomeTasks(homeSlots(spec))
		inside, err = cg.StartInside(start)
		closeHome()
		// Not born inside (a v2 cgroup, or a v1 hierarchy that refused
		// the thread): moved in, all or nothing, else the init process waits
		// without a cgroup and its run gets one of its own (joinCgroup).
		if err == nil && !inside {
			if aerr := cg.Attach(proc.Pid()); aerr != nil {
				if errors.Is(aerr, cgroup.ErrHalfJoined) {
					err = killHalfJoined(proc, aerr)
				}
				cg.Close()
				cg = nil
			}
		}
	} else {
		err = start()
	}
	for _, f := range []*os.File{cfgR, repW, outW, errW, statusW} {
		f.Close()
	}
	if err != nil {
		cg.Close()
		if posix.UserNSRefused(err) {
			err = fmt.Errorf("%w: %v", errNoUserNS, err)
		}
		return fail(err)
	}
	return &Pooled{proc: proc, program: program, pidNS: pidNS, id: id, born: time.Now(), cg: cg, cfgW: cfgW, repR: repR, outR: outR, errR: errR, statusR: statusR}, nil
}

// poolCgroup creates the cgroup a pooled init process is born in, without
// limits (a run sets its own when it takes the init process): moving a
// process into a cgroup later is what costs (see
// cgroup.Cgroup.StartInside). nil when the pool's runs have no cgroup or
// none can be had.
func poolCgroup(shape Shape) *cgroup.Cgroup {
	if !shape.Cgroup {
		return nil
	}
	cg, err := cgroup.Open(cgroup.Name("pool-"+random.ID()), unlimited(shape.CPUs))
	if err != nil {
		return nil
	}
	return cg
}

// unlimited is the limits of a cgroup waiting for its run: high enough
// that the run's own limits only ever lower them (a v1 memory limit may
// not rise above the memory+swap limit).
func unlimited(cpus float64) cgroup.Limits {
	return cgroup.Limits{MemoryBytes: 1 << 50, Pids: 1 << 22, CPUs: cpus}
}

// alive reports whether the init process has neither exited nor started to:
// waitid, which does not reap it here, says whether it has exited (with
// WNOHANG, Linux leaves si_signo 0 when it has not), and the state of its
// first thread whether it is exiting: a killed Go process's first thread
// is a zombie while its other threads still end, and until the last one
// has, its descriptors are open and waitid reports nothing.
func (pi *Pooled) alive() bool {
	pid := pi.proc.Pid()
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err != nil || info.Signo != 0 {
		return false
	}
	state, ok := proc.StatusValue("/proc/"+strconv.Itoa(pid)+"/status", "State:")
	return ok && !strings.HasPrefix(state, "Z") && !strings.HasPrefix(state, "X")
}

// readyTimeout bounds how long a run waits for an init process's prefix to end
// (see waitReady); past it the init process is dropped and the run starts its
// own.
const readyTimeout = 5 * time.Second

// waitReady waits until the init process has built what its prefix builds and
// awaits its run (see stageReady); false when its prefix failed, or it
// died or took longer than readyTimeout.
func (pi *Pooled) waitReady() bool {
	pi.repR.SetReadDeadline(time.Now().Add(readyTimeout))
	defer pi.repR.SetReadDeadline(time.Time{})
	return stageReady(pi.repR)
}

// kill ends an init process that never got a run, removes its cgroup and closes
// its descriptors.
func (pi *Pooled) kill() {
	pi.proc.Kill()
	pi.proc.Wait()
	pi.id.Release() // its processes are gone
	pi.cg.Close()
	for _, f := range []*os.File{pi.cfgW, pi.repR, pi.outR, pi.errR, pi.statusR} {
		f.Close()
	}
}

// canHandOver reports whether p's descriptors fit in one message.
func canHandOver(p *backend.Spec) bool {
	return len(p.ExtraFiles)+3 <= stageconfig.MaxPassedFDs // stdin, the proxy's and the listener's sockets
}

// TakeID returns the init process's own host id, which the run that
// reserved it now holds (see Shape.OwnIDs), or nil.
func (pi *Pooled) TakeID() *identity.RunID {
	id := pi.id
	pi.id = nil
	return id
}

// Unreserve puts back an init process that reserve handed out and whose run
// never took it, with its id; an init process that can no longer wait
// (dead, past maxIdle, the pool closed) is killed, and the id released once
// it is gone.
func (pl *Pool) Unreserve(pi *Pooled, id *identity.RunID) {
	pl.mu.Lock()
	if !pl.closed && pi.alive() && time.Since(pi.born) < pl.maxIdle {
		pi.id = id
		pl.idle = append([]*Pooled{pi}, pl.idle...) // the oldest
		pl.stats.Taken--
		pl.mu.Unlock()
		return
	}
	pl.mu.Unlock()
	pl.Discard(pi)
	id.Release()
}

// take hands a waiting init process of the pool to l's run (see use). It
// returns nil when the pool is nil or has no fitting init process; the files it
// opens are added to l.closeLater.
func (pl *Pool) take(l *Launch, out *backend.Outcome) (*startedInit, *cgroup.Cgroup, error) {
	if pl == nil {
		return nil, nil, nil
	}
	p := l.plan
	var pi *Pooled
	if pl.shape.OwnIDs {
		// The init process the run reserved (see reserve), whose id it has.
		pi, l.reserved = l.reserved, nil
		if pi != nil && !canHandOver(p) {
			pl.Discard(pi)
			return nil, nil, nil
		}
	} else {
		pi = pl.get(p)
	}
	if pi == nil {
		return nil, nil, nil
	}
	ip, cg, usable, err := pi.use(l, pl.shape, out)
	switch {
	case !usable:
		pl.Discard(pi)
		return nil, nil, nil
	case err != nil:
		// Killed half joined: taken, but died unused, and the run
		// fails (it does not start its own, so no miss either).
		pl.dropped(false)
		return nil, nil, err
	}
	return ip, cg, nil
}

// use hands the init process, of shape, to l's run: once its prefix is done
// (waitReady), it sets the run's cgroup limits, sends the run's descriptors
// (see the init process's childReceive), moves the init process into the
// run's cgroup when it has none, and returns it as launch uses it; the
// run's program is compiled meanwhile (startCompile). usable is false when
// the init process cannot serve (its prefix failed or it died): nothing of
// the run was used (its stdin is not read), and the caller kills the init
// process and starts another. An error is an init process killed half
// joined to the cgroup, which fails the run. The files it opens are added
// to l.closeLater.
func (pi *Pooled) use(l *Launch, shape Shape, out *backend.Outcome) (ip *startedInit, cg *cgroup.Cgroup, usable bool, err error) {
	p := l.plan
	// The run's program compiles while the prefix may still run.
	l.program = pi.program
	if p.Proxy != nil {
		// The descriptor handOver passes the proxy socket on.
		l.cfg.ProxyFD = stageconfig.FirstTreeFD + len(p.ExtraFiles)
	}
	if l.cfg.EpollBudget > 0 {
		// The one after (see handOver).
		l.cfg.NotifyFD = stageconfig.FirstTreeFD + len(p.ExtraFiles)
		if p.Proxy != nil {
			l.cfg.NotifyFD++
		}
	}
	startCompile(l, true)
	unused := func() (*startedInit, *cgroup.Cgroup, bool, error) {
		l.program = initProgram{}
		return nil, nil, false, nil
	}
	if !pi.waitReady() {
		return unused()
	}
	ip = &startedInit{
		st:   &started{proc: pi.proc, namespaces: shape.WantNS, pidns: stageconfig.Has(shape.WantNS, stageconfig.LayerPIDNS), pidNSLink: pi.pidNS},
		cfgW: pi.cfgW, repR: pi.repR, outR: pi.outR, errR: pi.errR, statusR: pi.statusR,
	}
	// The limits first: until the descriptors are sent, nothing of the
	// run is used up (its stdin is not read).
	if pi.cg != nil {
		if err := pi.cg.SetLimits(p.Cgroup); err != nil {
			return unused()
		}
	}
	if err := pi.handOver(p, l.cfg.EpollBudget, ip, &l.closeLater); err != nil {
		// The init process died after the liveness check (handOver sends
		// nothing and reads no stdin when the send fails).
		return unused()
	}
	l.closeLater = append(l.closeLater, pi.cfgW, pi.repR, pi.outR, pi.errR, pi.statusR)
	posix.EnableSubreaper(ip.st.pidns)
	if pi.cg == nil {
		cg, err := joinCgroup(l, ip.st, out)
		if err != nil {
			return nil, nil, true, err
		}
		return ip, cg, true, nil
	}
	ip.st.supervised = append(ip.st.supervised, stageconfig.LayerCgroup)
	relaxAddressSpace(l, out)
	return ip, pi.cg, true, nil
}

// joinCgroup moves a pooled init process that has no cgroup, and has done
// nothing yet, into the run's cgroup before its config is sent. A cgroup
// that cannot be had is reported missing, as for an init process of its
// own; an init process left in part of it (see cgroup.Cgroup.Attach) is
// killed, and an error.
func joinCgroup(l *Launch, st *started, out *backend.Outcome) (*cgroup.Cgroup, error) {
	p := l.plan
	if stageconfig.Has(p.Disabled, stageconfig.LayerCgroup) {
		return nil, nil
	}
	cg, err := cgroup.Open(cgroup.Name(p.RequestID), p.Cgroup)
	if err == nil {
		if err = cg.Attach(st.proc.Pid()); err != nil {
			cg.Close()
			if errors.Is(err, cgroup.ErrHalfJoined) {
				return nil, killHalfJoined(st.proc, err)
			}
		}
	}
	if err != nil {
		st.missing = append(st.missing, stageconfig.Missing{Layer: stageconfig.LayerCgroup, Reason: err.Error()})
		return nil, nil
	}
	st.supervised = append(st.supervised, stageconfig.LayerCgroup)
	relaxAddressSpace(l, out)
	return cg, nil
}

// handOver sends the run's stdin (when it has one), its handed-over trees
// and, with a host allowlist, the proxy socket, and with an epoll budget
// the socket for the seccomp listener, in one message on the
// config socket. The init process puts them where an init process of its
// own would have them (stdin on 0, the others from firstTreeFD on), so the
// config is the same either way.
func (pi *Pooled) handOver(p *backend.Spec, budget int, ip *startedInit, closeLater *[]*os.File) (err error) {
	header := byte(stageconfig.PassNoStdin)
	var pass, closeAfter []*os.File
	defer func() {
		for _, f := range closeAfter {
			f.Close()
		}
	}()
	// stdin: a file is passed as it is, but a folder not at all and a
	// socket through a pipe (posix.DirectStdin), as any other reader: a pipe fed
	// only once the send succeeded, so that a failed send has read nothing
	// of it.
	var feed func()
	in := p.Stdin
	if f, ok := in.(*os.File); ok {
		asIs, skip := posix.DirectStdin(f)
		switch {
		case skip:
			in = nil
		case asIs:
			header, pass, in = stageconfig.PassWithStdin, append(pass, f), nil
		}
	}
	if in != nil {
		pr, pw, perr := os.Pipe()
		if perr != nil {
			return perr
		}
		closeAfter = append(closeAfter, pr)
		header, pass = stageconfig.PassWithStdin, append(pass, pr)
		feed = func() {
			io.Copy(pw, in)
			pw.Close()
		}
		defer func() {
			if err != nil {
				pw.Close()
			}
		}()
	}
	pass = append(pass, p.ExtraFiles...)
	if p.Proxy != nil {
		sup, initEnd, err := posix.ProxySocketPair()
		if err != nil {
			return err
		}
		// The init process has its copy of initEnd once sent; the proxy
		// must see only the init process's end.
		closeAfter = append(closeAfter, initEnd)
		*closeLater = append(*closeLater, sup)
		ip.proxySup = sup // the socket after p.ExtraFiles: the config's ProxyFD (see use)
		pass = append(pass, initEnd)
	}
	if budget > 0 {
		sup, initEnd, err := posix.ProxySocketPair()
		if err != nil {
			return err
		}
		closeAfter = append(closeAfter, initEnd)
		*closeLater = append(*closeLater, sup)
		ip.notifySup = sup // the config's NotifyFD (see use)
		pass = append(pass, initEnd)
	}
	var oob []byte
	if len(pass) > 0 {
		fds := make([]int, len(pass))
		for i, f := range pass {
			fds[i] = int(f.Fd())
		}
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(int(pi.cfgW.Fd()), []byte{header}, oob, nil, 0); err != nil {
		return fmt.Errorf("handing descriptors to the pooled init process: %v", err)
	}
	if feed != nil {
		go feed()
	}
	return nil
}

// Idle returns the pids of the init processes waiting, oldest first, and
// why the pool starts none: disabled (it never will here) or the last
// failure (it waits for the next take). Tests wait on it for a state.
func (pl *Pool) Idle() (pids []int, failed, disabled error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for _, pi := range pl.idle {
		pids = append(pids, pi.proc.Pid())
	}
	return pids, pl.failed, pl.disabled
}

// CloseOldestConfig closes the config channel of the oldest waiting init
// process, which stays alive: the hand-over to the next run that takes it
// fails, as for an init process that died just after the liveness check.
// Tests use it to show that such a run starts its own.
func (pl *Pool) CloseOldestConfig() {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if len(pl.idle) > 0 {
		pl.idle[0].cfgW.Close()
	}
}
