//go:build linux || darwin

package stage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/run/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/reaper"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// maxConfig bounds the config the init stage accepts.
const maxConfig = 16 << 20

// ExecIfRequested is run.ExecInitIfRequested: it runs the init stage
// and exits when this process was started as one, and returns otherwise.
func ExecIfRequested() {
	if len(os.Args) != 1 || os.Args[0] != stageconfig.Arg0 {
		return
	}
	var st syscall.Stat_t
	// A pipe, or a socket for a stage started ahead in a Pool.
	if syscall.Fstat(stageconfig.ConfigFD, &st) != nil || (uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFIFO && uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFSOCK) {
		return
	}
	// Capabilities, no_new_privs, Landlock and seccomp are attributes of
	// the calling thread, and execve (or fork) from that thread is what
	// carries them into the script: everything below runs on this one
	// locked thread.
	runtime.LockOSThread()
	os.Exit(initMain())
}

// initMain runs the init stage. Without a PID namespace the script
// replaces this process, and initMain returns only when it could not exec
// the script; under one it returns once the script has exited (see
// reaper.Run).
func initMain() int {
	report := os.NewFile(stageconfig.ReportFD, "report")
	conf := os.NewFile(stageconfig.ConfigFD, "config")
	if err := receivePooled(); err != nil {
		stageconfig.WriteReport(report, stageconfig.Report{Fatal: err.Error()})
		return stageconfig.ExitFailure
	}
	cfg, err := readConfig(conf)
	if err != nil {
		stageconfig.WriteReport(report, stageconfig.Report{Fatal: err.Error()})
		return stageconfig.ExitFailure
	}
	applied, missing := applyLayers(cfg)
	if cfg.changed != nil {
		stageconfig.WriteReport(report, stageconfig.Report{Fatal: cfg.changed.Error()})
		return stageconfig.ExitFailure
	}
	if err := stageconfig.WriteReport(report, stageconfig.Report{Applied: applied, Missing: missing}); err != nil {
		return stageconfig.ExitFailure
	}
	// Wait for the supervisor's go-ahead when it may refuse the run
	// (RequireIsolation) now that it knows which layers took effect. The
	// reaper waits for it itself, overlapping the round trip with the
	// script's fork and exec (see reaper.Run).
	goAhead := func() bool {
		var b [1]byte
		n, _ := conf.Read(b[:])
		return n == 1 && b[0] == stageconfig.GoByte
	}
	if !cfg.WaitForGo {
		goAhead = func() bool { return true }
	}
	if reaper.IsNamespaceInit() {
		return reaper.Run(cfg.Config, reaper.Stage{OOMScore: cfg.oomScore, Seccomp: cfg.seccomp}, report, goAhead)
	}
	if !goAhead() {
		return stageconfig.ExitFailure
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

// config is the supervisor's config with what the init stage decides and
// opens on its way through the layers, which the supervisor never sees.
type config struct {
	*stageconfig.Config

	// seccomp is decided by the init stage itself, from the namespaces
	// that took effect, and used for every thread it filters.
	seccomp seccomp.Policy

	// oomScore is the reaper's own oom_score_adj, opened before Landlock
	// (see reaper.OpenOOMScore).
	oomScore *os.File

	// changed is set by runSteps when a layer found the host no longer as
	// the supervisor checked it (an error wrapping ErrBadConfig: a grant
	// or masked entry swapped meanwhile). That is an attack under way, not
	// a missing kernel feature: the run is refused, AllowDegraded or not.
	changed error

	// privateTmp says that setupMounts built the mount namespace, so
	// /tmp and /dev/shm are the run's own tmpfs (Landlock may grant them).
	privateTmp bool
}

// step is one isolation layer as applied by the init stage.
type step struct {
	layer stageconfig.Layer
	apply func(cfg *config) error
}

// runSteps applies the steps whose layer the config asks for, in order, and
// sorts them into applied and missing. A failing layer does not stop the
// others: the supervisor decides whether a missing one is acceptable. An
// error wrapping ErrBadConfig (the host changed since the supervisor's
// checks) is also kept in cfg.changed, which refuses the run.
func runSteps(cfg *config, steps []step) (applied []stageconfig.Layer, missing []stageconfig.Missing) {
	for _, s := range steps {
		if !stageconfig.Has(cfg.Layers, s.layer) && !stageconfig.Has(cfg.Namespaces, s.layer) {
			continue
		}
		if err := s.apply(cfg); err != nil {
			if errors.Is(err, stageconfig.ErrBadConfig) && cfg.changed == nil {
				cfg.changed = err
			}
			missing = append(missing, stageconfig.Missing{Layer: s.layer, Reason: err.Error()})
			continue
		}
		applied = append(applied, s.layer)
	}
	return applied, missing
}
