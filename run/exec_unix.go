//go:build linux || darwin

package run

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// reaperGrace bounds how long a timed-out or canceled run waits for the
// reaper (PID 1) to kill and reap the namespace before it is killed.
const reaperGrace = 500 * time.Millisecond

// outputGrace bounds how long Run waits for the output pipes to drain after
// the sandbox is gone; only a process that escaped the kill could hold them.
const outputGrace = 2 * time.Second

// Reasons a run ended early, set by the watchdog.
const (
	endNormal int32 = iota
	endTimeout
	endCanceled
	endExited // the init stage or script exited by itself first
	endOutput // a stream passed Sandbox.MaxOutput
	endLimit  // the watch found a cap passed (Result.LimitExceeded)
)

// started describes the init stage process once it runs.
type started struct {
	proc       *child
	namespaces []Layer   // namespaces the process was cloned into
	missing    []Missing // namespaces (and the cgroup) that could not be had, and why
	supervised []Layer   // layers the supervisor applied: the cgroup
	pidns      bool      // the process is PID 1 of its own PID namespace
	// pidNSLink is the process's PID namespace (its /proc ns/pid link),
	// which the watch compares processes against. It is read before the
	// process runs its program: then the program makes it not dumpable
	// (initplan's notDumpable), and an unprivileged supervisor can no
	// longer read it. Empty until read (see readPIDNSLink).
	pidNSLink string
}

// launch starts the init stage, hands it the config, checks the layer
// report, lets it execve the script and waits for the whole tree to end.
func launch(ctx context.Context, p *plan, res *Result) error {
	res.AddressSpaceMB = int(p.cfg.Limits.AddressSpace >> 20)
	if ctx.Err() != nil {
		res.Canceled = true
		return nil
	}
	var closeLater []*os.File
	defer func() {
		for _, f := range closeLater {
			f.Close()
		}
	}()
	if p.proxy != nil {
		defer p.proxy.stop(res)
	}
	// A pre-started init stage when the plan has a pool and one fits;
	// otherwise a new one.
	ip, cg, err := p.pool.take(p, &closeLater, res)
	if ip != nil {
		defer p.pool.refill()
	}
	if err == nil && ip == nil {
		ip, cg, err = startFresh(p, &closeLater, res)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStart, err)
	}
	st, cfgW, repR, outR, errR, statusR, proxySup := ip.st, ip.cfgW, ip.repR, ip.outR, ip.errR, ip.statusR, ip.proxySup
	// On the early return below; finishCgroup or finishLater closes it
	// otherwise (and sets cg to nil).
	defer func() { cg.Close() }()
	start := time.Now()
	proc := st.proc
	if p.needMountNS != nil && !stageconfig.Has(st.namespaces, LayerMountNS) {
		// Without a mount namespace the handed-over trees cannot be
		// attached: refuse before anything runs.
		killSandbox(proc, st.pidns)
		proc.Wait()
		return p.needMountNS
	}
	p.cfg.Namespaces = st.namespaces
	if !stageconfig.Has(st.namespaces, LayerMountNS) {
		if err := makeDeferredWorkDir(p); err != nil {
			killSandbox(proc, st.pidns)
			proc.Wait()
			return fmt.Errorf("%w: %v", ErrStart, err)
		}
	}
	if !stageconfig.Has(st.namespaces, LayerUserNS) && p.cfg.Limits.Procs > 0 && stageconfig.NprocIsPerRun() {
		p.cfg.Limits.Procs += uint64(countProcs(p.hostUID))
	}

	// The watch (watch_linux.go) ends the run past a cap the kernel does
	// not keep here; overLimit carries which one.
	watch := planWatch(p, st, cg)
	if watch.maxMemory > 0 { // the watch holds the memory: no cgroup does
		relaxAddressSpace(p, res)
	}
	// After planWatch, which may find the watch missing.
	p.knownMissing = len(st.missing) > 0 || p.strict && len(p.disabled) > 0
	p.cfg.MemoryCgroup = cg != nil
	// The config is complete: the init process, which waits for its
	// program, gets it before the goroutines below start, whose wake-ups
	// would otherwise come first on 2 cores.
	startErr := sendStage(cfgW, p)
	if startErr != nil {
		startErr = fmt.Errorf("sending config: %v", startErr)
	} else if err := cg.MakeLate(p.cgroup, cfgW); err != nil {
		startErr = fmt.Errorf("the run's cgroup: %v", err)
	} else {
		cg.OpenStats()
	}
	overLimit := make(chan string, 1)
	// A stream past MaxOutput ends the run like the time limit does.
	tooMuch := make(chan struct{})
	var tooMuchOnce sync.Once
	p.stdout.onExceed = func() { tooMuchOnce.Do(func() { close(tooMuch) }) }
	p.stderr.onExceed = p.stdout.onExceed
	var copies sync.WaitGroup
	copies.Add(2)
	go func() { defer copies.Done(); io.Copy(p.stdout, outR) }()
	go func() { defer copies.Done(); io.Copy(p.stderr, errR) }()

	// The watchdog kills the whole sandbox on timeout or cancellation, at
	// any point from here on: while the layers are set up, or while the
	// script runs.
	var ended atomic.Int32
	var running atomic.Bool // the script runs under a reaper (PID 1)
	var limit atomic.Pointer[string]
	done := make(chan struct{})
	kill := func() { killSandbox(proc, st.pidns) }
	// stop ends a running run. Under a PID namespace it first asks the
	// reaper, by closing the config pipe, to kill and reap the namespace
	// itself, which keeps the script's status and CPU time; SIGKILL to
	// PID 1 follows if it has not exited after reaperGrace.
	stop := func() {
		if running.Load() {
			cfgW.Close()
			select {
			case <-done:
				return
			case <-time.After(reaperGrace):
			}
		}
		kill()
	}
	go func() {
		timer := time.NewTimer(p.timeout)
		defer timer.Stop()
		select {
		case <-done:
		case <-timer.C:
			if ended.CompareAndSwap(endNormal, endTimeout) {
				stop()
			}
		case <-ctx.Done():
			if ended.CompareAndSwap(endNormal, endCanceled) {
				stop()
			}
		case <-tooMuch:
			if ended.CompareAndSwap(endNormal, endOutput) {
				stop()
			}
		case what := <-overLimit:
			limit.Store(&what)
			if ended.CompareAndSwap(endNormal, endLimit) {
				stop()
			}
		}
	}()
	if watch.active() {
		go runWatch(watch, proc.Pid(), st.pidns, done, func(what string) { overLimit <- what })
	}

	runErr := handshake(p, st, startErr, cfgW, repR, proxySup, res, kill)
	running.Store(runErr == nil && st.pidns && res.Started)
	// Under a PID namespace the reaper reports the script's status and the
	// run's usage once every process of the run is gone, then exits: the
	// result is complete at the report, and the reaper's exit, the
	// namespaces' teardown and the cgroup's removal are left to
	// finishLater, off the caller's path. Without a report (no PID
	// namespace, a reaper killed), the init stage is waited for here.
	var msg []byte
	var reported bool
	var waitErr error
	if running.Load() {
		msg, reported = readReaperReport(statusR)
	}
	// Without a PID namespace the kernel does not end the tree with its
	// first process: what is left of the process group and session, and
	// any descendant reparented to us, is killed (killSandbox), while the
	// first process's pid is still its own: before it is reaped.
	if !reported {
		if st.pidns {
			waitErr = proc.Wait()
		} else {
			waitErr = proc.waitSweeping(func() { killSandbox(proc, false) })
		}
	}
	ended.CompareAndSwap(endNormal, endExited)
	close(done)
	res.Duration = time.Since(start)
	if reported {
		if !st.pidns {
			killSandbox(proc, false) // finishLater reaps it
		}
		recordCgroupStats(cg, res)
		res.cleanup = make(chan struct{})
		go finishLater(proc, cg, p.teardown, res)
		p.teardown = nil
		cg = nil
	} else {
		finishCgroup(cg, res)
		cg = nil
	}
	waitOutput(&copies, outR, errR)
	res.Stdout = p.stdout.output()
	res.Stderr = p.stderr.output()
	switch {
	case p.stdout.exceeded:
		res.OutputExceeded = "stdout"
	case p.stderr.exceeded:
		res.OutputExceeded = "stderr"
	}

	switch ended.Load() {
	case endTimeout:
		res.TimedOut = true
	case endCanceled:
		res.Canceled = true
	case endLimit:
		res.LimitExceeded = *limit.Load()
	}
	var status *syscall.WaitStatus
	var statusErr error
	if reported {
		rep := stageconfig.ParseReaperReport(msg)
		status = &rep.Status
		fillStatus(res, rep.Status)
		res.CPUTime, res.MaxRSSKB = rep.User+rep.System, rep.MaxRSSKiB
	} else {
		reaperExited, reaperCode := false, 0
		if ws, _, ok := proc.exitState(); st.pidns && ok && ws.Exited() {
			reaperExited, reaperCode = true, ws.ExitStatus()
		}
		status, statusErr = scriptStatus(io.MultiReader(bytes.NewReader(msg), statusR), reaperExited, reaperCode)
		fillExit(res, proc, status)
	}
	if runErr == nil && statusErr != nil {
		runErr = statusErr
	}
	if runErr == nil && st.pidns && res.Started && status == nil && !res.TimedOut && !res.Canceled && res.LimitExceeded == "" {
		// The reaper did not report: the script's own status is unknown,
		// and the exit code or signal is PID 1's, not the script's.
		if res.Signal != "" {
			runErr = fmt.Errorf("%w: the sandbox's PID 1 was killed by %s before the script's status was sent", ErrStart, res.Signal)
		} else {
			runErr = fmt.Errorf("%w: the sandbox's PID 1 failed (exit %d) before the script's status was sent", ErrStart, res.ExitCode)
		}
		res.ExitCode, res.Signal = -1, ""
	}
	if !res.Started {
		// The init stage's status, not a script's: a refused run's init
		// stage is killed, which is no signal of the script's.
		res.ExitCode, res.Signal = -1, ""
	}
	// (finishLater owns proc once the reaper has reported.)
	if !reported && runErr == nil && waitErr != nil && !proc.hasExitState() {
		runErr = fmt.Errorf("%w: wait: %v", ErrStart, waitErr)
	}
	if runErr != nil && (res.TimedOut || res.Canceled || res.LimitExceeded != "") && !errors.Is(runErr, ErrIsolation) {
		// The handshake broke because we killed the sandbox; that is a
		// timeout, a cancellation or a limit, not a start failure.
		runErr = nil
	}
	return runErr
}

// initProc is a started init stage and the supervisor's ends of its
// descriptors.
type initProc struct {
	st       *started
	cfgW     *os.File // the config: a pipe, or a socket for a pooled stage
	repR     *os.File // the layer report
	outR     *os.File // the script's stdout
	errR     *os.File // the script's stderr
	statusR  *os.File // the script's wait status, from the reaper
	proxySup *os.File // the allowlist proxy's socket; nil without one
}

// startFresh starts an init stage for p in the run's cgroup (see
// startInCgroup). The files it opens are added to closeLater.
func startFresh(p *plan, closeLater *[]*os.File, res *Result) (*initProc, *cgroup.Cgroup, error) {
	// Placed first: a cgroup joined late makes the config channel a
	// socket (see configChannel).
	if !stageconfig.Has(p.disabled, LayerCgroup) {
		p.lateCgroup = cgroup.PlanLate(cgroup.Name(p.requestID), p.cgroup, p.hostUID)
	}
	pipe := func(stageReads bool) (sup, stage *os.File, err error) {
		sup, stage, err = stagePipe(stageReads)
		if err == nil {
			*closeLater = append(*closeLater, sup, stage)
		}
		return sup, stage, err
	}
	cfgW, cfgR, err1 := configChannel(p.lateCgroup != nil)
	if err1 == nil {
		*closeLater = append(*closeLater, cfgW, cfgR)
	}
	repR, repW, err2 := pipe(false)
	outR, outW, err3 := pipe(false)
	errR, errW, err4 := pipe(false)
	statusR, statusW, err5 := pipe(false)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return nil, nil, err
	}
	if err := chownOutput(p.hostUID, p.hostGID, outW, errW); err != nil {
		return nil, nil, err
	}
	stdin, err := stdinFile(p.stdin, closeLater)
	if err != nil {
		return nil, nil, err
	}
	// The HomeTasksFD slots stay empty unless startInCgroup fills them.
	extra := append(append([]*os.File{cfgR, repW, statusW}, make([]*os.File, stageconfig.HomeTasksSlots)...), p.extraFiles...)
	var proxySup, proxyChild *os.File
	if p.proxy != nil {
		sup, child, err := proxySocketPair()
		if err != nil {
			return nil, nil, err
		}
		*closeLater = append(*closeLater, sup, child)
		p.cfg.ProxyFD = stageconfig.ConfigFD + len(extra) // the next descriptor
		proxySup, proxyChild, extra = sup, child, append(extra, child)
	}
	spec := &launchSpec{name: p.requestID, stdin: stdin, stdout: outW, stderr: errW, extra: extra, report: repR}
	startCompile(p, false)
	st, cg, err := startInCgroup(spec, p, res)
	for _, f := range []*os.File{cfgR, repW, outW, errW, statusW} {
		f.Close()
	}
	if proxyChild != nil {
		proxyChild.Close()
	}
	if err != nil {
		return nil, nil, err
	}
	return &initProc{st: st, cfgW: cfgW, repR: repR, outR: outR, errR: errR, statusR: statusR, proxySup: proxySup}, cg, nil
}

// launchSpec is what an init stage starts with: its standard descriptors
// and, from descriptor 3 on, extra (config, report, status, the home
// tasks slots, the trees, the proxy socket; a nil entry leaves its slot
// closed); name names the run (the request id, for people reading ps).
type launchSpec struct {
	name           string
	stdin          io.Reader // nil (/dev/null) or an *os.File (see stdinFile)
	stdout, stderr *os.File
	extra          []*os.File
	// report is the supervisor's end of the stage's report pipe, where
	// an init process of the run's own says it has made its namespaces
	// (see startSplit); nil for a pooled one.
	report *os.File
}

// chownOutput gives the script's stdout and stderr pipes to its host
// identity, so that reopening them by name (echo x > /dev/stderr,
// /proc/self/fd/1) passes the permission check, as it does outside the
// sandbox; the pipes are private to this run either way.
func chownOutput(uid, gid int, outW, errW *os.File) error {
	if uid == os.Geteuid() {
		return nil
	}
	for _, f := range []*os.File{outW, errW} {
		if err := unix.Fchown(int(f.Fd()), uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// handshake fails the start when sending the init stage its program or
// making its cgroup failed (startErr), else reads the layer report,
// refuses a run with missing layers (see refusing) or with layers built
// part-way (which the init stage has refused already, see
// incompleteError) and lets the init stage execve the script, with a
// go-ahead when it waits for one. It records the layers and whether the
// script started in res.
func handshake(p *plan, st *started, startErr error, cfgW, repR, proxySup *os.File, res *Result, kill func()) error {
	if startErr != nil {
		kill()
		return fmt.Errorf("%w: %v", ErrStart, startErr)
	}
	rd := bufio.NewReader(repR)
	rep, waiting, err := readStageReport(rd, p)
	if err != nil {
		kill()
		return fmt.Errorf("%w: init stage: %v", ErrStart, err)
	}
	if rep.Fatal != "" {
		kill()
		return fmt.Errorf("%w: init stage: %s", ErrStart, rep.Fatal)
	}
	if rep.Prebuilt {
		p.pool.countPrebuilt()
	}
	res.Applied, res.Missing = mergeLayers(p, st, rep)
	res.Missing = explainMissing(res.Missing)
	if rep.Changed != "" {
		// A grant or mask swapped since the checks: refused like any
		// other isolation failure, AllowDegraded or not.
		kill()
		return fmt.Errorf("%w: init stage: %s", ErrIsolation, rep.Changed)
	}
	if len(rep.Incomplete) > 0 {
		kill()
		return incompleteError(explainIncomplete(rep.Incomplete))
	}
	if blocking := refusing(p, res.Applied, res.Missing); len(blocking) > 0 {
		// The init stage waits for the go-ahead whenever a layer is
		// missing and the config may refuse the run (stageconfig's
		// WaitForGo), so the script has not started.
		kill()
		return isolationError(blocking)
	}
	if p.proxy != nil {
		if err := startAllowlist(p, proxySup, res); err != nil {
			kill()
			return err
		}
	}
	warnDegraded(p.warn, res.Missing)
	if waiting {
		if _, err := cfgW.Write([]byte{stageconfig.GoByte}); err != nil {
			kill()
			return fmt.Errorf("%w: starting script: %v", ErrStart, err)
		}
	}
	// The report pipe is close-on-exec: its end without another message
	// means execve succeeded.
	ok, execErr, err := readStageAfter(rd, p)
	switch {
	case err != nil:
		return fmt.Errorf("%w: init stage: %v", ErrStart, err)
	case execErr != "":
		return fmt.Errorf("%w: exec %s: %s", ErrStart, p.cfg.Argv[0], execErr)
	}
	res.Started = ok
	return nil
}

// mergeLayers orders the init stage's report, the layers the supervisor
// applied or could not have and the disabled layers into Applied and
// Missing.
func mergeLayers(p *plan, st *started, rep stageconfig.Report) ([]Layer, []Missing) {
	var applied []Layer
	var missing []Missing
	kept := rootKept(p.hostUID)
	for _, l := range allLayers(p.cfg.AllowNetwork) {
		switch {
		case l == LayerUserNS && kept != "" && !stageconfig.Has(p.disabled, l):
			missing = append(missing, Missing{Layer: l, Reason: kept})
		case stageconfig.Has(rep.Applied, l), stageconfig.Has(st.supervised, l):
			applied = append(applied, l)
		case stageconfig.Has(p.disabled, l):
			missing = append(missing, Missing{Layer: l, Reason: "disabled"})
		case l == LayerLandlockNet && stageconfig.Has(rep.Applied, LayerNetNS):
			// Not needed: TCP cannot leave the private network
			// namespace (see applyLandlock).
		case l == LayerWatch && !hasMissing(st.missing, l):
			// Not needed: the work folder is a capped tmpfs and the
			// cgroup caps the memory (see planWatch).
		default:
			reason := ""
			for _, m := range append(st.missing, rep.Missing...) {
				if m.Layer == l {
					reason = m.Reason
					break
				}
			}
			if reason == "" {
				reason = "not reported by the init stage"
			}
			missing = append(missing, Missing{Layer: l, Reason: reason})
		}
	}
	return applied, missing
}

// hasMissing reports whether ms holds layer l.
func hasMissing(ms []Missing, l Layer) bool {
	for _, m := range ms {
		if m.Layer == l {
			return true
		}
	}
	return false
}

// stdinFile turns the caller's reader into something exec can hand over:
// nil stays nil (/dev/null), a file is passed as is but a folder (not at
// all) and a socket (copied) (see directStdin), and any other reader is
// copied through a pipe.
func stdinFile(r io.Reader, closeLater *[]*os.File) (io.Reader, error) {
	if r == nil {
		return nil, nil
	}
	if f, ok := r.(*os.File); ok {
		asIs, skip := directStdin(f)
		switch {
		case skip:
			return nil, nil
		case asIs:
			return f, nil
		}
	}
	pw, pr, err := stagePipe(true)
	if err != nil {
		return nil, err
	}
	*closeLater = append(*closeLater, pr)
	go func() {
		io.Copy(pw, r)
		pw.Close()
	}()
	return pr, nil
}

// directStdin tells how the file f, given as the script's stdin, reaches
// it: not at all (skip: the script reads /dev/null) when it is a folder,
// whose descriptor would lead into the host's tree from inside the
// sandbox's root (/proc/self/fd/0, openat(0, "..")), past the mount
// namespace; copied through a pipe when it is a socket, the caller's
// connection: passed as it is, the script could write to the caller's
// peer (a Node.js parent's stdio "pipes" are socket pairs; an inetd-style
// service's stdin is its client) or shut it down; as it is otherwise.
func directStdin(f *os.File) (asIs, skip bool) {
	st, err := f.Stat()
	switch {
	case err != nil || st.IsDir():
		return false, true
	case st.Mode()&os.ModeSocket != 0:
		return false, false
	}
	return true, false
}

// waitOutput waits for both output copies to reach EOF; if something still
// holds the pipes after outputGrace, it closes them.
func waitOutput(copies *sync.WaitGroup, pipes ...*os.File) {
	drained := make(chan struct{})
	go func() { copies.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(outputGrace):
		for _, f := range pipes {
			f.Close()
		}
		<-drained
	}
}

// scriptStatus reads the script's wait status from the reaper's report
// (PID 1 of the PID namespace), when launch did not get a whole one before
// the reaper exited. Without a PID namespace, or when
// the reaper was killed first (timeout, cancellation), there is none and
// the init stage's own status is the run's (nil, nil). A reaper that
// exited normally must have sent exactly one report: anything else means
// a process of the run wrote to its pipe (possible only when the caller
// disabled layers), and the status is not trusted. Every writer has exited
// by now, so the read cannot block.
//
// reaperExited is false without a PID namespace or when PID 1 did not exit
// normally; reaperCode is its exit code.
func scriptStatus(r io.Reader, reaperExited bool, reaperCode int) (*syscall.WaitStatus, error) {
	if !reaperExited {
		return nil, nil
	}
	msg, err := io.ReadAll(io.LimitReader(r, 64))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: reading the script's status: %v", ErrStart, err)
	case len(msg) == 0 && reaperCode != 0:
		return nil, nil // the reaper failed before the script ran
	case len(msg) != stageconfig.ReaperReportLen || reaperCode != 0:
		return nil, fmt.Errorf("%w: the script's status from PID 1 is malformed (%d bytes, reaper exit %d)", ErrStart, len(msg), reaperCode)
	}
	ws := stageconfig.ParseReaperReport(msg).Status
	return &ws, nil
}

// fillExit copies exit status and resource usage into res. The exit status
// is the script's (status, from the reaper) when known, else that of the
// init stage process; the resource usage is always the init stage's, which
// includes every process of the run it or its descendants waited for.
func fillExit(res *Result, proc *child, status *syscall.WaitStatus) {
	ws, ru, ok := proc.exitState()
	if !ok {
		return
	}
	if status != nil {
		ws = *status
	}
	fillStatus(res, ws)
	if ru != nil {
		res.CPUTime = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		res.MaxRSSKB = maxRSSKB(ru)
	}
}

// fillStatus sets the exit code or the signal of res from ws.
func fillStatus(res *Result, ws syscall.WaitStatus) {
	if ws.Signaled() {
		res.ExitCode = -1
		res.Signal = unix.SignalName(ws.Signal())
		if res.Signal == "" {
			res.Signal = fmt.Sprintf("signal %d", int(ws.Signal()))
		}
	} else {
		res.ExitCode = ws.ExitStatus()
	}
}
