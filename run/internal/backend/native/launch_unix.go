//go:build linux || darwin

package native

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"github.com/skill-sandbox/skill-sandbox/run/internal/watch"
)

// launchOS is the Unix part of a launch's state: the init process and
// the supervisor's ends of its descriptors, the run's cgroup and the
// program sent to the init process.
type launchOS struct {
	// closeLater are the descriptors the launch opened, closed when it
	// returns.
	closeLater []*os.File
	// pooled says whether the init process was taken from the pool.
	pooled bool
	// init is the started init process; nil until start.
	init *startedInit
	// begun is when the init process was had, for Outcome.Duration.
	begun time.Time
	// cg is the run's cgroup; nil without one, and once finishCgroup or
	// FinishLater has it.
	cg *cgroup.Cgroup
	// lateCgroup is the run's cgroup when the init process joins it
	// once it is made, after the clone (see planLateCgroup); nil
	// otherwise.
	lateCgroup *cgroup.Cgroup
	// knownMissing: a layer is already known to be missing when the
	// init process starts (a namespace, the cgroup, a layer disabled in
	// a strict run), so it waits for the go-ahead in any case.
	knownMissing bool
	// program is what the init process is sent (see sendStage).
	program initProgram
	// copies are the goroutines copying the script's output.
	copies sync.WaitGroup
	// epoll serves the seccomp listener that counts the run's epoll
	// watches, when the run has a budget (Config.EpollBudget).
	epoll epollRun
	// running says the script runs under an init process that reaps (a
	// PID namespace), which stop asks to end the run itself.
	running atomic.Bool
}

// launch starts the init process, hands it the config, checks the layer
// report, lets it execve the script and waits for the whole tree to end.
func launch(ctx context.Context, l *Launch, out *backend.Outcome) error {
	p := l.plan
	out.AddressSpaceMB = int(p.Config.Limits.AddressSpace >> 20)
	if ctx.Err() != nil {
		out.Canceled = true
		return nil
	}
	defer l.closeFiles()
	if p.Proxy != nil {
		defer l.proxy.stop(out)
	}
	defer l.epoll.stop()
	err := l.start(out)
	if l.pooled {
		defer l.pool.refill()
	}
	if err != nil {
		return err
	}
	// On the early return below; release takes it otherwise.
	defer func() { l.cg.Close() }()
	if err := l.complete(); err != nil {
		return err
	}
	st := l.init.st
	// The watch (run/internal/watch) ends the run past a cap the kernel
	// does not keep here.
	wp := planWatch(p, st, l.cg)
	if wp.MaxMemory > 0 { // the watch holds the memory: no cgroup does
		relaxAddressSpace(l, out)
	}
	// After planWatch, which may find the watch missing.
	l.knownMissing = len(st.missing) > 0 || p.Strict && len(p.Disabled) > 0
	l.cfg.MemoryCgroup = l.cg != nil
	// The config is complete: the init process, which waits for its
	// program, gets it before the goroutines below start, whose wake-ups
	// would otherwise come first on 2 cores.
	startErr := l.sendConfig()
	wd := newWatchdog(l)
	l.copyOutput()
	// From here on the watchdog kills the whole sandbox on timeout or
	// cancellation: while the layers are set up, or while the script runs.
	wd.Start(ctx, p.Timeout, func() { l.stop(wd.Done()) })
	if wp.Active() {
		go watch.Run(wp, st.proc.Pid(), st.pidns, wd.Done(), wd.Exceeded)
	}
	runErr := handshake(l, startErr, out)
	l.running.Store(runErr == nil && st.pidns && out.Started)
	end := posix.WaitEnd(l.init.st.proc, l.init.st.pidns, l.running.Load(), l.init.statusR)
	out.Duration = time.Since(l.begun)
	wd.Finish()
	l.release(end, out)
	posix.WaitOutput(&l.copies, l.init.outR, l.init.errR)
	l.collectOutput(out)
	backend.RecordEnd(wd, out)
	return posix.Collect(end, l.init.st.proc, l.init.st.pidns, l.init.statusR, runErr, out)
}

// closeFiles closes the descriptors the launch opened.
func (l *Launch) closeFiles() {
	for _, f := range l.closeLater {
		f.Close()
	}
}

// start takes an init process from the launch's pool when one fits, else
// starts one of the run's own.
func (l *Launch) start(out *backend.Outcome) error {
	ip, cg, err := l.pool.take(l, out)
	l.pooled = ip != nil
	if err == nil && ip == nil {
		ip, cg, err = startFresh(l, out)
	}
	if err != nil {
		return fmt.Errorf("%w: %v", backend.ErrStart, err)
	}
	l.init, l.cg, l.begun = ip, cg, time.Now()
	return nil
}

// complete fits the config to the namespaces the init process has, or
// ends the init process when the run cannot do without one it lacks.
func (l *Launch) complete() error {
	p, st := l.plan, l.init.st
	if !st.proc.MaySignal() {
		return l.refuseUnsignalled()
	}
	hasMountNS := stageconfig.Has(st.namespaces, stageconfig.LayerMountNS)
	if p.NeedMountNS != nil && !hasMountNS {
		// Without a mount namespace the handed-over trees cannot be
		// attached: refuse before anything runs.
		l.killAndWait()
		return p.NeedMountNS
	}
	l.cfg.Namespaces = st.namespaces
	if !hasMountNS {
		if err := makeDeferredWorkDir(l); err != nil {
			l.killAndWait()
			return fmt.Errorf("%w: %v", backend.ErrStart, err)
		}
	}
	if !stageconfig.Has(st.namespaces, stageconfig.LayerUserNS) && l.cfg.Limits.Procs > 0 && stageconfig.NprocIsPerRun() {
		l.cfg.Limits.Procs += uint64(posix.CountProcs(p.UID))
	}
	return nil
}

// sendConfig sends the init process its program, then makes a cgroup
// placed late (see planLateCgroup); the error fails the start.
func (l *Launch) sendConfig() error {
	if err := sendStage(l.init.cfgW, l); err != nil {
		return fmt.Errorf("sending config: %v", err)
	}
	if err := l.cg.MakeLate(l.plan.Cgroup, l.init.cfgW); err != nil {
		return fmt.Errorf("the run's cgroup: %v", err)
	}
	l.cg.OpenStats()
	return nil
}

// copyOutput copies the script's output streams into their captures
// until their pipes end (see posix.WaitOutput).
func (l *Launch) copyOutput() {
	l.copies.Add(2)
	go func() { defer l.copies.Done(); io.Copy(l.stdout, l.init.outR) }()
	go func() { defer l.copies.Done(); io.Copy(l.stderr, l.init.errR) }()
}

// refuseUnsignalled ends and refuses a run whose processes this process
// may not signal: it could neither stop them at the time limit nor end
// them on a refusal. The init process, waiting for its program, exits
// when the config channel closes.
func (l *Launch) refuseUnsignalled() error {
	l.init.cfgW.Close()
	l.init.st.proc.Wait()
	why := "no user namespace"
	for _, m := range posix.ExplainMissing(l.init.st.missing) {
		if m.Layer == stageconfig.LayerUserNS {
			why = m.Reason
		}
	}
	return fmt.Errorf("%w: the supervisor may not signal the run's processes (host uid %d, %s, and no CAP_KILL), so it could not stop them", backend.ErrIsolation, l.plan.UID, why)
}

// kill ends every process of the run (see posix.KillAll). It closes the
// config channel first: an init process still waiting for its program
// or the go-ahead then exits by itself, even where a signal is refused.
func (l *Launch) kill() {
	l.init.cfgW.Close()
	posix.KillAll(l.init.st.proc, l.init.st.pidns)
}

// killAndWait ends every process of the run and reaps the init process.
func (l *Launch) killAndWait() {
	l.kill()
	l.init.st.proc.Wait()
}

// stop ends a started run. Under a PID namespace it first asks the init
// process, by closing the config channel, to kill and reap the namespace
// itself, which keeps the script's status and CPU time; SIGKILL to the
// init process follows if it has not exited after posix.ReapGrace, or done is
// closed first (the run ended by itself).
func (l *Launch) stop(done <-chan struct{}) {
	if l.running.Load() {
		l.init.cfgW.Close()
		select {
		case <-done:
			return
		case <-time.After(posix.ReapGrace):
		}
	}
	l.kill()
}

// release hands the init process, the cgroup and the teardown to
// posix.FinishLater once the init process has reported; otherwise it records
// the cgroup's figures and removes it.
func (l *Launch) release(e posix.Ending, out *backend.Outcome) {
	st := l.init.st
	if e.Reported {
		if !st.pidns {
			posix.KillAll(st.proc, false) // FinishLater reaps it
		}
		recordCgroupStats(l.cg, out)
		out.Cleanup = backend.NewCleanup()
		go posix.FinishLater(st.proc, l.cg, l.teardown, out.Cleanup)
		l.teardown = nil
	} else {
		finishCgroup(l.cg, out)
	}
	l.cg = nil
}
