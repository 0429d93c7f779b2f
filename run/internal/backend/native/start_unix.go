//go:build linux || darwin

package native

import (
	"errors"
	"io"
	"os"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// started describes the init process once it runs.
type started struct {
	proc       *posix.Process
	namespaces []stageconfig.Layer   // namespaces the process was cloned into
	missing    []stageconfig.Missing // namespaces (and the cgroup) that could not be had, and why
	supervised []stageconfig.Layer   // layers the supervisor applied: the cgroup
	pidns      bool                  // the process is the first of its own PID namespace
	// pidNSLink is the process's PID namespace (its /proc ns/pid link),
	// which the watch compares processes against. It is read before the
	// process runs its program: then the program makes it not dumpable
	// (initplan's notDumpable), and an unprivileged supervisor can no
	// longer read it. Empty until read (see watch.PIDNSLink).
	pidNSLink string
}

// startedInit is a started init process and the supervisor's ends of its
// descriptors.
type startedInit struct {
	st       *started
	cfgW     *os.File // the config: a pipe, or a socket for a pooled one
	repR     *os.File // the layer report
	outR     *os.File // the script's stdout
	errR     *os.File // the script's stderr
	statusR  *os.File // the script's wait status, from the init process
	proxySup *os.File // the allowlist proxy's socket; nil without one
	// notifySup is the socket the seccomp listener comes on; nil
	// without an epoll budget.
	notifySup *os.File
}

// startFresh starts an init process of the run's own in the run's
// cgroup (see startInCgroup). The files it opens are added to
// l.closeLater.
func startFresh(l *Launch, out *backend.Outcome) (*startedInit, *cgroup.Cgroup, error) {
	p := l.plan
	// Placed first: a cgroup joined late makes the config channel a
	// socket (see configChannel).
	if !stageconfig.Has(p.Disabled, stageconfig.LayerCgroup) {
		l.lateCgroup = cgroup.PlanLate(cgroup.Name(p.RequestID), p.Cgroup, p.UID)
	}
	pipe := func(stageReads bool) (sup, stage *os.File, err error) {
		sup, stage, err = posix.Pipe(stageReads)
		if err == nil {
			l.closeLater = append(l.closeLater, sup, stage)
		}
		return sup, stage, err
	}
	cfgW, cfgR, err1 := configChannel(l.lateCgroup != nil)
	if err1 == nil {
		l.closeLater = append(l.closeLater, cfgW, cfgR)
	}
	repR, repW, err2 := pipe(false)
	outR, outW, err3 := pipe(false)
	errR, errW, err4 := pipe(false)
	statusR, statusW, err5 := pipe(false)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return nil, nil, err
	}
	if err := posix.ChownOutput(p.UID, p.GID, outW, errW); err != nil {
		return nil, nil, err
	}
	stdin, err := posix.StdinFile(p.Stdin, &l.closeLater)
	if err != nil {
		return nil, nil, err
	}
	// The HomeTasksFD slots stay empty unless startInCgroup fills them.
	extra := append(append([]*os.File{cfgR, repW, statusW}, make([]*os.File, stageconfig.HomeTasksSlots)...), p.ExtraFiles...)
	var proxySup, proxyInit *os.File
	if p.Proxy != nil {
		sup, initEnd, err := posix.ProxySocketPair()
		if err != nil {
			return nil, nil, err
		}
		l.closeLater = append(l.closeLater, sup, initEnd)
		l.cfg.ProxyFD = stageconfig.ConfigFD + len(extra) // the next descriptor
		proxySup, proxyInit, extra = sup, initEnd, append(extra, initEnd)
	}
	var notifySup, notifyInit *os.File
	if l.cfg.EpollBudget > 0 {
		sup, initEnd, err := posix.ProxySocketPair()
		if err != nil {
			return nil, nil, err
		}
		l.closeLater = append(l.closeLater, sup, initEnd)
		l.cfg.NotifyFD = stageconfig.ConfigFD + len(extra) // the next descriptor
		notifySup, notifyInit, extra = sup, initEnd, append(extra, initEnd)
	}
	spec := &launchSpec{name: p.RequestID, stdin: stdin, stdout: outW, stderr: errW, extra: extra, report: repR}
	startCompile(l, false)
	st, cg, err := startInCgroup(spec, l, out)
	for _, f := range []*os.File{cfgR, repW, outW, errW, statusW} {
		f.Close()
	}
	for _, f := range []*os.File{proxyInit, notifyInit} {
		if f != nil {
			f.Close()
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return &startedInit{st: st, cfgW: cfgW, repR: repR, outR: outR, errR: errR, statusR: statusR, proxySup: proxySup, notifySup: notifySup}, cg, nil
}

// launchSpec is what an init process starts with: its standard descriptors
// and, from descriptor 3 on, extra (config, report, status, the home
// tasks slots, the trees, the proxy socket; a nil entry leaves its slot
// closed); name names the run (the request id, for people reading ps).
type launchSpec struct {
	name           string
	stdin          io.Reader // nil (/dev/null) or an *os.File (see posix.StdinFile)
	stdout, stderr *os.File
	extra          []*os.File
	// report is the supervisor's end of the init process's report pipe, where
	// an init process of the run's own says it has made its namespaces
	// (see startSplit); nil for a pooled one.
	report *os.File
}
