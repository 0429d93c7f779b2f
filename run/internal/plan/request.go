// Package plan decides one run before any process starts: it checks the
// request, validates the skill, resolves the script and its interpreter,
// and plans the grants, the environment, the work folder, the host
// identity and the proxy. The outcome is a native.Launch holding the
// backend.Spec, which the backend then starts.
//
// For most uses, call run.Sandbox.Run: this package is run's planning,
// kept apart so that package run holds the public API only. Request
// mirrors run.Sandbox field by field (run.Sandbox documents each), with
// the defaults already applied; Facts are what the planning learnt that
// run.Result reports.
package plan

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/gvisor"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/native"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

// Request is one run as asked: run.Sandbox's fields, with run's defaults
// applied to the zero limits (MemoryMB, Timeout, OutputCap, MaxProcs,
// MaxFileMB, MaxOpenFiles, WorkDirMB, WriteMB), negative ones kept for
// the planning to refuse.
type Request struct {
	SkillDir                                string
	Env                                     map[string]string
	AllowNetwork                            bool
	AllowHosts, DenyHosts                   []string
	AllowLocal                              []int
	AllowUnix                               []string
	Secrets                                 *netproxy.Secrets
	Timeout                                 time.Duration
	MemoryMB                                int
	CPUs                                    float64
	MaxProcs, CPUSeconds, MaxEpollWatches   int
	MaxFileMB, MaxOpenFiles, OutputCap      int
	Module                                  bool
	MaxOutput                               int64
	UseWorkDir, KeepWorkDir                 bool
	ReadPaths, WritePaths, Interpreters     []string
	NodeModules                             string
	ReadOnlyPaths, AutorunWritable          []string
	Cwd                                     string
	DenyPaths, AllowDenied                  []string
	WorkDirMB, WriteMB                      int
	AllowDegraded, RequireIsolation, Strict bool
	Stdin                                   io.Reader
	Stdout, Stderr, Warnings, NetworkLog    io.Writer
	RequestID                               string
	Disable                                 []stageconfig.Layer
	Backend                                 string
	BackendFallback                         bool

	// Pool is the run's pool of pre-started init processes and gVisor
	// sandboxes, nil for none.
	Pool *native.Pool
	// Resolve and Dial replace the proxy's name lookup and dialing
	// (tests); nil for the real ones.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	Dial    func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// SharedNobody makes a root caller's run keep uid 65534, which other
	// runs share, instead of a host id of its own (tests of shared ids).
	SharedNobody bool
}

// Facts are what the planning learnt that run.Result reports, filled as
// far as the planning got, refused or not.
type Facts struct {
	Skill       string          // the skill's name, once validated
	Script      string          // the script's path in the skill folder
	Interpreter []string        // the argv before the script
	Validation  validate.Result // the skill's validation
	Grants      grants.Grants   // the grants as resolved
	Made        []string        // the write folders the planning made
	WorkDir     string          // the kept work folder
}

// The backends a Request may choose.
const (
	BackendNative = "native"
	BackendGVisor = gvisor.Name
)

// Refusals the planning returns, besides those of stageconfig and
// backend (run.Err* are these).
var (
	ErrInvalidSkill = errors.New("skill is invalid")
	ErrBadScript    = errors.New("script refused") // missing, outside scripts/, not a regular file

	ErrNoInterpreter = stageconfig.ErrNoInterpreter
	ErrBadConfig     = stageconfig.ErrBadConfig
	ErrIsolation     = backend.ErrIsolation
	ErrUnsupported   = backend.ErrUnsupported
	ErrStart         = backend.ErrStart
)

// EpollWatchesFloor is run.EpollWatchesFloor.
const EpollWatchesFloor = 32768

// DefaultEpollWatches is run.DefaultEpollWatches.
func DefaultEpollWatches(maxUserWatches int) int {
	n := max(maxUserWatches/8, EpollWatchesFloor)
	if maxUserWatches > 0 {
		n = min(n, maxUserWatches)
	}
	return n
}

// reserve returns a waiting init process whose host id the run may have
// (see native.Pool.Reserve), or nil.
func (s *Request) reserve() *native.Pooled {
	return s.Pool.Reserve(Enabled(backend.NamespaceLayers(s.AllowNetwork), s.Disable), s.Disable, s.CPUs)
}
