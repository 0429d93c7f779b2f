package plan

import (
	"fmt"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// checkNumbers refuses negative limits.
func (s *Request) checkNumbers() error {
	for name, v := range map[string]int{
		"MemoryMB": s.MemoryMB, "MaxProcs": s.MaxProcs, "MaxFileMB": s.MaxFileMB,
		"MaxOpenFiles": s.MaxOpenFiles, "OutputCap": s.OutputCap, "WorkDirMB": s.WorkDirMB,
		"WriteMB": s.WriteMB,
	} {
		if v < 0 {
			return fmt.Errorf("%w: %s is negative (%d)", ErrBadConfig, name, v)
		}
	}
	if s.MaxOutput < 0 {
		return fmt.Errorf("%w: MaxOutput is negative (%d)", ErrBadConfig, s.MaxOutput)
	}
	if s.CPUs < 0 || s.CPUs != s.CPUs {
		return fmt.Errorf("%w: CPUs is negative or not a number (%v)", ErrBadConfig, s.CPUs)
	}
	if s.Timeout < 0 {
		return fmt.Errorf("%w: Timeout is negative (%s)", ErrBadConfig, s.Timeout)
	}
	return nil
}

func knownLayer(l stageconfig.Layer) bool { return stageconfig.Has(backend.AllLayers(false), l) }

// Enabled is ls without the layers in disable, in ls's order. A run's
// namespaces and a pool's shape both come from it, so they compare equal
// exactly when a pooled init process fits the run.
func Enabled(ls, disable []stageconfig.Layer) []stageconfig.Layer {
	var out []stageconfig.Layer
	for _, l := range ls {
		if !stageconfig.Has(disable, l) {
			out = append(out, l)
		}
	}
	return out
}

// newRequestID returns 128 random bits in hex.
func newRequestID() string { return random.ID() }

// cpuSeconds is the RLIMIT_CPU of a run: the asked limit, else one second
// more than the wall-time limit (a single-threaded script cannot use more).
func cpuSeconds(asked int, timeout time.Duration) uint64 {
	if asked > 0 {
		return uint64(asked)
	}
	return uint64(timeout.Seconds()) + 1
}

// nobodyUID is identity.Nobody, the host identity of the sandbox when
// the caller is root; run's shorthand, as its grants and tests use it.
const nobodyUID = identity.Nobody

// checkConfig refuses a Request whose fields contradict themselves or
// are out of range, and returns the host allowlist's plan (nil without
// one).
func (s *Request) checkConfig() (*netproxy.Config, error) {
	if s.SkillDir == "" {
		return nil, fmt.Errorf("%w: no skill folder given", ErrBadConfig)
	}
	if err := s.checkNumbers(); err != nil {
		return nil, err
	}
	if s.AllowDegraded && s.RequireIsolation {
		return nil, fmt.Errorf("%w: AllowDegraded and RequireIsolation contradict each other", ErrBadConfig)
	}
	if s.Backend != "" && s.Backend != BackendNative && s.Backend != BackendGVisor {
		return nil, fmt.Errorf("%w: unknown backend %q (want %s or %s)", ErrBadConfig, s.Backend, BackendNative, BackendGVisor)
	}
	for _, l := range s.Disable {
		if !knownLayer(l) {
			return nil, fmt.Errorf("%w: unknown layer %q in Disable", ErrBadConfig, l)
		}
	}
	if err := s.checkUnixSockets(); err != nil {
		return nil, err
	}
	return s.planProxy()
}
