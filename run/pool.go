package run

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/native"
	"github.com/skill-sandbox/skill-sandbox/run/internal/plan"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// DefaultPoolMaxIdle is how long a pre-started init process may wait for a
// run when NewPool is given no limit. Past it the init process is killed and
// replaced, so that none outlives what the supervisor knew when it started
// it (the host's mounts and identities) by long.
const DefaultPoolMaxIdle = 30 * time.Second

// Pool keeps a few init processes started ahead of the runs that will use
// them, for long-lived callers such as the MCP server: each is already
// cloned into its namespaces (user, PID, mount, IPC, UTS and, unless the
// network is allowed, network), has its uid and gid maps written and its Go
// runtime started, has built what every run of the pool shares (the new
// root with the system folders, /etc, /dev, /proc and /dev/shm, the
// loopback up, the Landlock ruleset with the rules on those, the seccomp
// filter), and waits for its config; the run's own parts (skill and work
// folders, grants, masks, /tmp) are added when it comes. What the init
// process shows of /etc is therefore the host's as of the init process's
// start, at most maxIdle old. A run whose namespaces and identity match
// takes one (see Sandbox.Pool), hands it its descriptors (stdin, the
// handed-over trees, the proxy socket) and its config, and the pool starts
// a replacement in the background: once that run is done, or at once when
// it took the last init process waiting. The run then goes on exactly as
// with an init process of its own: the cgroup is joined before the config
// is sent, and every layer is applied from the config, on what was built
// ahead where the config agrees with it (an init process whose build does
// not fit the run discards it and builds the root afresh).
//
// Each init process serves one run at most and is never reused; nothing of
// a run reaches another (every init process has its own pipes and
// namespaces). An init process that has waited longer than its maximum, or
// that died, is killed and replaced, not used. Close kills the waiting init
// processes; runs already under way are not affected. A Pool is safe for
// concurrent use.
//
// Runs with the gvisor backend take gVisor sandboxes started ahead
// instead, each for one run (see GVisorStats), of the shape of the last
// two gvisor runs when they had the same (their mounts, identity,
// network and limits): the runs that teach the pool a shape start their
// own. A pooled gVisor run keeps every cap an unpooled one has: the
// supervisor's watch follows the pre-started sandbox's processes from
// before the script is handed over, holds the write grants' growth from
// what they held when the run came, and holds the sandbox's /tmp, a host
// folder that the run's work folder is made in, to the work folder's
// caps (/tmp and the work folder together, where an unpooled run has
// two folders of that size). A sandbox whose bound folders were replaced
// since it started is not used.
//
// Only Linux has pools; elsewhere a Pool never holds an init process and
// every run starts its own.
type Pool struct {
	p *native.Pool
}

// PoolStats counts what a Pool did since NewPool.
type PoolStats struct {
	Started int // init processes started
	Taken   int // init processes handed to a run
	Missed  int // runs that found no fitting init process and started their own
	Expired int // init processes killed after waiting longer than the maximum
	Died    int // init processes found dead when taken, and discarded
	// Prebuilt counts the runs whose root was the one their pooled init process
	// built ahead; a run whose configuration the build does not fit has
	// its root built afresh, and is not counted.
	Prebuilt int
}

// NewPool starts size init processes fitting runs of like (its AllowNetwork
// and Disable decide the namespaces, Disable and CPUs the cgroup) and keeps that many waiting until
// Close. maxIdle bounds how long one waits (DefaultPoolMaxIdle when zero).
// like is not kept.
func NewPool(size int, maxIdle time.Duration, like Sandbox) (*Pool, error) {
	return newPool(size, maxIdle, like, nil)
}

// newPool is NewPool with the pool's trace set before its filler starts
// (see native.Pool): tests check with it the order of the steps that
// decide when init processes start.
func newPool(size int, maxIdle time.Duration, like Sandbox, trace func(event string)) (*Pool, error) {
	if size < 0 || maxIdle < 0 {
		return nil, fmt.Errorf("%w: negative pool size or idle time", ErrBadConfig)
	}
	if maxIdle == 0 {
		maxIdle = DefaultPoolMaxIdle
	}
	uid, gid := plan.SandboxIdentity()
	shape := native.Shape{
		WantNS: plan.Enabled(backend.NamespaceLayers(like.AllowNetwork), like.Disable),
		UID:    uid, GID: gid,
		OwnIDs:       uid == identity.Nobody && identity.OwnRunIDs(),
		Cgroup:       !stageconfig.Has(like.Disable, LayerCgroup),
		CPUs:         like.CPUs,
		AllowNetwork: like.AllowNetwork,
	}
	return &Pool{p: native.NewPool(size, maxIdle, shape, trace)}, nil
}

// Stats returns the pool's counters.
func (pl *Pool) Stats() PoolStats { return PoolStats(pl.p.Stats()) }

// GVisorStats returns the counters of the pool's gVisor sandboxes:
// started, taken by a run, missed (a gvisor run found none of its
// shape), expired and died (Prebuilt is not used).
func (pl *Pool) GVisorStats() PoolStats { return PoolStats(pl.p.GVisorStats()) }

// Close kills the waiting init processes and waits until they are gone; the
// pool starts no more. Runs that already took an init process are not
// affected. Close may be called more than once.
func (pl *Pool) Close() error { return pl.p.Close() }

// native returns the pool's implementation, nil for a nil pool (a run
// without one).
func (pl *Pool) native() *native.Pool {
	if pl == nil {
		return nil
	}
	return pl.p
}

// SetSlots lets the pool's gvisor runs whose folders are made for one run
// each (serve's executions) take pre-started sandboxes. A run's one write
// grant directly in parent is its slot: the pool learns its shape with
// the slot standing for any (the last two such runs with the same shape
// teach it), and starts each sandbox of it with a slot folder of its own,
// which newSlot makes in parent (new, empty, writable by the scripts'
// identity as a write grant must be) and the pool removes if no run
// takes it. Such a sandbox serves only the run that reserved it
// (ReserveSlot) and whose write grant is its slot, at the same path, and
// only while that folder is still the one it bound: a slot renamed,
// replaced or made a symbolic link makes the run start its own sandbox.
// parent is named as runs name their grants (symbolic links resolved).
// Elsewhere than Linux it does nothing.
func (pl *Pool) SetSlots(parent string, newSlot func() (string, error)) {
	pl.p.SetSlots(parent, newSlot)
}

// ReserveSlot reserves a waiting gVisor sandbox of the slot shape (see
// SetSlots) for one run of the skill in skillDir, and returns its slot
// folder: the caller writes the run's input files there and gives the
// run that folder as its write grant (and working folder); no other run
// can take the sandbox. ok is false when none waits, the sandboxes are
// shaped for another skill's runs (this run could not take one), or the
// pool's size in sandboxes is reserved already: the run then uses a
// folder of its own, unpooled. A reserved
// sandbox that waits past the pool's idle limit is closed, and its run
// starts its own, on the same folder. The caller calls ReleaseSlot when
// the run will not come; the folder is the caller's in every case.
func (pl *Pool) ReserveSlot(skillDir string) (slot string, ok bool) {
	// As runs name it (see SetSlots).
	dir, err := filepath.EvalSymlinks(skillDir)
	if err == nil {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return "", false
	}
	return pl.p.ReserveSlot(dir)
}

// ReleaseSlot closes the sandbox reserved with slot, unless a run took it
// already; the slot folder stays.
func (pl *Pool) ReleaseSlot(slot string) { pl.p.ReleaseSlot(slot) }
