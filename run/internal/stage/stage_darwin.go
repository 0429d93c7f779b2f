package stage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// maxConfig bounds the config the init process accepts.
const maxConfig = 16 << 20

// ExecIfRequested is run.ExecInitIfRequested: it runs the init process
// and exits when this process was started as one, and returns otherwise.
func ExecIfRequested() {
	if len(os.Args) != 1 || os.Args[0] != stageconfig.Arg0 {
		return
	}
	var st syscall.Stat_t
	if syscall.Fstat(stageconfig.ConfigFD, &st) != nil || uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFIFO {
		return
	}
	// The limits are set on this thread's process, and execve from this
	// thread replaces it with sandbox-exec.
	runtime.LockOSThread()
	os.Exit(initMain())
}

// initMain runs the init process: the script replaces this process, and
// initMain returns only when it could not exec the script.
func initMain() int {
	report := os.NewFile(stageconfig.ReportFD, "report")
	conf := os.NewFile(stageconfig.ConfigFD, "config")
	cfg, err := readConfig(conf)
	if err != nil {
		stageconfig.WriteReport(report, stageconfig.Report{Fatal: err.Error()})
		return stageconfig.ExitFailure
	}
	applied, missing := applyLayers(cfg)
	if cfg.changed != nil {
		stageconfig.WriteReport(report, stageconfig.Report{Applied: applied, Missing: missing, Changed: describe(cfg.changed)})
		return stageconfig.ExitFailure
	}
	if len(cfg.incomplete) > 0 {
		// Refused here, not by the supervisor: with AllowDegraded it
		// does not send a go-ahead, and the script must not start.
		stageconfig.WriteReport(report, stageconfig.Report{Applied: applied, Missing: missing, Incomplete: cfg.incomplete})
		return stageconfig.ExitFailure
	}
	if err := stageconfig.WriteReport(report, stageconfig.Report{Applied: applied, Missing: missing}); err != nil {
		return stageconfig.ExitFailure
	}
	// Wait for the supervisor's go-ahead when it may refuse the run
	// now that it knows which layers took effect.
	if cfg.WaitForGo {
		var b [1]byte
		if n, _ := conf.Read(b[:]); n != 1 || b[0] != stageconfig.GoByte {
			return stageconfig.ExitFailure
		}
	}
	if err := os.Chdir(cfg.Dir); err != nil {
		stageconfig.WriteReport(report, stageconfig.Report{ExecError: err.Error()})
		return 127
	}
	proc.CloseExtraFDs()
	execScript(cfg, report)
	return 127
}

// readConfig reads the length-prefixed config (see sendConfig).
func readConfig(r io.Reader) (*config, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, fmt.Errorf("reading config: %v", err)
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > maxConfig {
		return nil, fmt.Errorf("config too large (%d bytes)", size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("reading config: %v", err)
	}
	cfg := config{Config: new(stageconfig.Config)}
	if err := stageconfig.Decode(data, cfg.Config); err != nil {
		return nil, fmt.Errorf("decoding config: %v", err)
	}
	if len(cfg.Argv) == 0 {
		return nil, fmt.Errorf("config has no command")
	}
	return &cfg, nil
}

// config is the supervisor's config with what the init process finds on
// its way through the layers, which the supervisor never sees.
type config struct {
	*stageconfig.Config

	// changed is set by runSteps when a layer found the host no longer as
	// the supervisor checked it (an error wrapping ErrBadConfig: a grant
	// or masked entry swapped meanwhile). That is an attack under way, not
	// a missing kernel feature: the run is refused, AllowDegraded or not.
	changed error

	// incomplete lists the layers the kernel offers whose construction
	// failed part-way (see step.builds and applyLandlock): the run is
	// refused, AllowDegraded or not, since what such a layer was to
	// hide or lock may now be in reach while the record could only say
	// "missing".
	incomplete []stageconfig.Missing
}

// step is one isolation layer as applied by the init process.
type step struct {
	layer stageconfig.Layer
	apply func(cfg *config) error
	// builds marks a step whose layer exists once it starts (a namespace
	// clone(2) created) or whose kernel feature it has found present: a
	// failure then means the layer is built part-way, and refuses the
	// run (cfg.incomplete), unless the error wraps errUnavailable (the
	// kernel, or a policy over it, refused the layer's first call with
	// nothing changed yet: the layer is simply not offered here).
	builds bool
}

// errUnavailable marks a failure of a builds step that leaves the layer
// exactly as absent as on a host without it: AllowDegraded may run
// without it (see step.builds).
var errUnavailable = errors.New("unavailable here, nothing of it applied")

// runSteps applies the steps whose layer the config asks for, in order, and
// sorts them into applied and missing. A failing layer does not stop the
// others: the supervisor decides whether a missing one is acceptable. An
// error wrapping ErrBadConfig (the host changed since the supervisor's
// checks) is also kept in cfg.changed, and a builds step's failure in
// cfg.incomplete; either refuses the run.
func runSteps(cfg *config, steps []step) (applied []stageconfig.Layer, missing []stageconfig.Missing) {
	for _, s := range steps {
		if !stageconfig.Has(cfg.Layers, s.layer) && !stageconfig.Has(cfg.Namespaces, s.layer) {
			continue
		}
		if err := s.apply(cfg); err != nil {
			if errors.Is(err, stageconfig.ErrBadConfig) && cfg.changed == nil {
				cfg.changed = err
			}
			m := stageconfig.Missing{Layer: s.layer, Reason: describe(err)}
			if s.builds && !errors.Is(err, errUnavailable) {
				cfg.incomplete = append(cfg.incomplete, m)
			}
			missing = append(missing, m)
			continue
		}
		applied = append(applied, s.layer)
	}
	return applied, missing
}

// describe words err for the layer report: each of the errors it joins
// on a part of its own, each with the name of the errno it wraps
// (ENOENT, EPERM), so that the record names the step, the path and the
// errno of every failure.
func describe(err error) string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var parts []string
		for _, e := range j.Unwrap() {
			parts = append(parts, describe(e))
		}
		return strings.Join(parts, "; ")
	}
	var errno syscall.Errno
	if errors.As(err, &errno) && errno != 0 {
		if name := unix.ErrnoName(errno); name != "" && !strings.Contains(err.Error(), name) {
			return fmt.Sprintf("%v (%s)", err, name)
		}
	}
	return err.Error()
}
