package gvisor

import (
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// runsc 20221219 keeps no memory limit inside the sandbox but RLIMIT_AS,
// which counts neither files in its tmpfs mounts (/tmp, the work folder,
// /dev) nor memfds nor System V segments, and has no OOM killer of its
// own. So the supervisor watches the sandbox's memory, which counts all
// of these (rootless, what gVisor's kernel accounts; as root, runsc's
// cgroup's charge but file cache), and ends the run past the limit, the
// record saying why; as root runsc's cgroup stays the outer wall,
// memoryHeadroom above (docs/backends.md, "Limits").
const (
	// memoryHeadroom is what runsc's cgroup allows above the watch's
	// limit: gVisor's own memory (the Sentry's heap, measured 12 MiB
	// above what it accounts to a script holding 200 MiB) and what a
	// script may allocate between two looks of the watch.
	memoryHeadroom = 256 << 20
	// watchRate is the fastest a script is taken to allocate, bytes per
	// second (measured under runsc's ptrace platform: about 0.3 to 0.6
	// GB/s): the watch looks again before the remaining room could be
	// filled at that rate, at least every watchMaxEvery and at most
	// every watchMinEvery (a look starts runsc: about 20 ms of CPU).
	watchRate     = 1 << 30
	watchMinEvery = 50 * time.Millisecond
	watchMaxEvery = time.Second
)

// memoryCap is the memory the watch holds p's sandbox to, bytes: the
// run's memory and work folder (both in gVisor's memory), as the native
// backend's cgroup does; 0 for none.
func memoryCap(p *backend.Spec) int64 { return p.Cgroup.MemoryBytes }
