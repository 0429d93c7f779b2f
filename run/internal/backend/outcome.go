package backend

import (
	"time"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// Outcome is what a backend's launch of one Spec found: the layers in
// force, whether and how the script ended, what it used and wrote. A
// launch fills the Outcome run gives it, as far as it got, also when it
// fails; run copies it into its Result. The script's side only: the
// grants, the artifacts and the other facts run decided itself are not
// here.
type Outcome struct {
	Started bool                  // the script's process was started
	Applied []stageconfig.Layer   // layers in force for the script
	Missing []stageconfig.Missing // layers that could not be applied, and why

	ExitCode int    // exit status; -1 when killed by a signal or not started
	Signal   string // signal name when killed by one, e.g. "SIGKILL"
	TimedOut bool   // ended because Spec.Timeout passed
	Canceled bool   // ended because the launch's context was canceled
	// LimitExceeded names the cap the watch found passed (a watch value),
	// OutputExceeded the stream that passed MaxOutput ("stdout",
	// "stderr"); "" for none.
	LimitExceeded, OutputExceeded string

	Duration     time.Duration // wall time from the start to the end
	CPUTime      time.Duration // user and system time of the process tree
	MaxRSSKB     int64         // peak resident set size of one process, in KiB
	PeakMemoryKB int64         // peak memory of the run's cgroup or job
	OOMKills     int           // processes the cgroup's OOM killer ended
	// AddressSpaceMB is the RLIMIT_AS the script got, relaxed when a
	// cgroup or the watch holds the memory.
	AddressSpaceMB int
	// EpollBudget is the epoll_ctl(EPOLL_CTL_ADD) calls the supervisor
	// let the run make (it counted each: stageconfig.Config.EpollBudget);
	// 0 when it counted none.
	EpollBudget int

	Stdout, Stderr Stream
	// Network is the allowlist proxy's report; nil without a proxy.
	Network *netproxy.Report
	// BackendVersion is the version of an outside runtime (runsc); "" for
	// the native backends.
	BackendVersion string
	// Cleanup, when not nil, ends once the run's processes, namespaces and
	// cgroup are gone, after the launch returned.
	Cleanup *Cleanup
}

// NewOutcome returns the Outcome of a launch not started: no exit code.
func NewOutcome() *Outcome { return &Outcome{ExitCode: -1} }

// Stream is the summary of one output stream of the script.
type Stream struct {
	Bytes     int64  // bytes written in all
	SHA256    string // hex SHA-256 of all of them
	Captured  []byte // the first Output.CapBytes of them
	Truncated bool   // Bytes is more than Captured holds
}

// Cleanup is the teardown a launch leaves running once its outcome is
// complete (the init process's exit, the namespaces', the cgroup's
// removal).
type Cleanup struct {
	done chan struct{}
	// cgroupBeforeExit: the cgroup was removed while the init process was
	// still exiting. Set before done is closed.
	cgroupBeforeExit bool
}

// NewCleanup returns a teardown under way.
func NewCleanup() *Cleanup { return &Cleanup{done: make(chan struct{})} }

// Finish ends the teardown; cgroupBeforeExit says the cgroup was removed
// before the init process exited. It is called once.
func (c *Cleanup) Finish(cgroupBeforeExit bool) {
	c.cgroupBeforeExit = cgroupBeforeExit
	close(c.done)
}

// Wait returns once Finish was called; it returns at once for a nil c.
// The bool is Finish's cgroupBeforeExit.
func (c *Cleanup) Wait() bool {
	if c == nil {
		return false
	}
	<-c.done
	return c.cgroupBeforeExit
}
