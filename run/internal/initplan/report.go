//go:build linux && (amd64 || arm64)

package initplan

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// Report turns the init process's report into the layers applied and
// missing, with a message for each failure, as the supervisor reads it.
func (p *Plan) Report(r initproc.Report) stageconfig.Report {
	out := stageconfig.Report{Applied: layersOf(r.Applied), Prebuilt: p.prebuilt}
	missing := append([]stageconfig.Missing(nil), p.missing...)
	for i := 0; i < int(r.NFail) && i < len(r.Fails); i++ {
		f := r.Fails[i]
		reason := p.describe(f)
		switch f.Kind {
		case initproc.FailFatal:
			out.Fatal = reason
			continue
		case initproc.FailChanged:
			out.Changed = reason
		}
		for _, l := range layersOf(f.Layers) {
			m := stageconfig.Missing{Layer: l, Reason: reason}
			missing = append(missing, m)
			if f.Kind != initproc.FailMissing {
				out.Incomplete = append(out.Incomplete, m)
			}
		}
	}
	// In the order of the layers, as the init process reported them.
	for _, l := range layerOrder {
		for _, m := range missing {
			if m.Layer == l {
				out.Missing = append(out.Missing, m)
			}
		}
	}
	return out
}

// describe words a failure: the operation's description and the errno
// with its name, as "mount /proc: operation not permitted (EPERM)"; a swap
// with its own message.
func (p *Plan) describe(f initproc.Failure) string {
	if msg, ok := p.changed[int(f.Op)]; ok && f.Kind == initproc.FailChanged {
		return msg
	}
	desc := p.prog.Describe(f.Op)
	if f.Errno == 0 {
		return desc
	}
	e := syscall.Errno(f.Errno)
	reason := fmt.Sprintf("%s: %v", desc, e)
	if name := unix.ErrnoName(e); name != "" && !strings.Contains(reason, name) {
		reason += " (" + name + ")"
	}
	if f.Kind == initproc.FailMissing {
		reason += "; unavailable here, nothing of it applied"
	}
	return reason
}

// ExecError words the init process's report that the script could not be
// started.
func (p *Plan) ExecError(e initproc.ExecError) string {
	err := syscall.Errno(e.Errno)
	switch e.Step {
	case initproc.StepChdir:
		return fmt.Sprintf("chdir %s: %v", p.dirName, err)
	case initproc.StepLimitAS:
		return fmt.Sprintf("RLIMIT_AS: %v", err)
	case initproc.StepLimitCPU:
		return fmt.Sprintf("RLIMIT_CPU on the script: %v", err)
	case initproc.StepLimitProcs:
		return fmt.Sprintf("RLIMIT_NPROC: %v", err)
	case initproc.StepReaper:
		return fmt.Sprintf("starting the script from the init process: %v", err)
	}
	return err.Error()
}
