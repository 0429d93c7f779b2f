//go:build linux || darwin

package run

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
)

// maxConfig bounds the config the init stage accepts.
const maxConfig = 16 << 20

// execStageIfRequested is ExecInitIfRequested: it runs the init stage
// and exits when this process was started as one, and returns otherwise.
func execStageIfRequested() {
	if len(os.Args) != 1 || os.Args[0] != initArg0 {
		return
	}
	var st syscall.Stat_t
	// A pipe, or a socket for a stage started ahead in a Pool.
	if syscall.Fstat(configFD, &st) != nil || (uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFIFO && uint32(st.Mode)&syscall.S_IFMT != syscall.S_IFSOCK) {
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
// spawnAndReap).
func initMain() int {
	report := os.NewFile(reportFD, "report")
	conf := os.NewFile(configFD, "config")
	if err := receivePooled(); err != nil {
		writeReport(report, initReport{Fatal: err.Error()})
		return initExitFailure
	}
	cfg, err := readConfig(conf)
	if err != nil {
		writeReport(report, initReport{Fatal: err.Error()})
		return initExitFailure
	}
	applied, missing := applyLayers(cfg)
	if cfg.changed != nil {
		writeReport(report, initReport{Fatal: cfg.changed.Error()})
		return initExitFailure
	}
	if err := writeReport(report, initReport{Applied: applied, Missing: missing}); err != nil {
		return initExitFailure
	}
	// Wait for the supervisor's go-ahead when it may refuse the run
	// (RequireIsolation) now that it knows which layers took effect. The
	// reaper waits for it itself, overlapping the round trip with the
	// script's fork and exec (see spawnAndReap).
	goAhead := func() bool {
		var b [1]byte
		n, _ := conf.Read(b[:])
		return n == 1 && b[0] == goByte
	}
	if !cfg.WaitForGo {
		goAhead = func() bool { return true }
	}
	if isNamespaceInit() {
		return spawnAndReap(cfg, report, goAhead)
	}
	if !goAhead() {
		return initExitFailure
	}
	if err := os.Chdir(cfg.Dir); err != nil {
		writeReport(report, initReport{ExecError: err.Error()})
		return 127
	}
	closeExtraFDs()
	execScript(cfg, report)
	return 127
}

// readConfig reads the length-prefixed config (see sendConfig).
func readConfig(r io.Reader) (*initConfig, error) {
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
	var cfg initConfig
	if err := decodeConfig(data, &cfg); err != nil {
		return nil, fmt.Errorf("decoding config: %v", err)
	}
	if len(cfg.Argv) == 0 {
		return nil, fmt.Errorf("config has no command")
	}
	return &cfg, nil
}

// step is one isolation layer as applied by the init stage.
type step struct {
	layer Layer
	apply func(cfg *initConfig) error
}

// runSteps applies the steps whose layer the config asks for, in order, and
// sorts them into applied and missing. A failing layer does not stop the
// others: the supervisor decides whether a missing one is acceptable. An
// error wrapping ErrBadConfig (the host changed since the supervisor's
// checks) is also kept in cfg.changed, which refuses the run.
func runSteps(cfg *initConfig, steps []step) (applied []Layer, missing []Missing) {
	for _, s := range steps {
		if !has(cfg.Layers, s.layer) && !has(cfg.Namespaces, s.layer) {
			continue
		}
		if err := s.apply(cfg); err != nil {
			if errors.Is(err, ErrBadConfig) && cfg.changed == nil {
				cfg.changed = err
			}
			missing = append(missing, Missing{Layer: s.layer, Reason: err.Error()})
			continue
		}
		applied = append(applied, s.layer)
	}
	return applied, missing
}
