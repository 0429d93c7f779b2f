package cgroup

import (
	"errors"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/random"
)

// InitAllowance is added to MaxProcs for pids.max: the init process lives
// in the cgroup too. RLIMIT_NPROC, set on the script with the init
// process counted exactly, stays the tight limit; pids.max is the
// backstop that also holds without a user namespace, where RLIMIT_NPROC
// counts every process of the host user.
const InitAllowance = 64

// Limits is what a run's cgroup enforces; zero fields are not set.
type Limits struct {
	MemoryBytes int64   // memory.max, swap 0
	Pids        int64   // pids.max
	CPUs        float64 // cpu.max quota in CPUs per period
}

// Stats are read from the cgroup after the run.
type Stats struct {
	PeakBytes int64 // highest memory charge; 0 when the kernel does not say
	OOMKills  int64 // processes the cgroup's OOM killer killed
}

// Prefix starts the name of every run's cgroup.
const Prefix = "skill-sandbox-"

// Name is the run's cgroup folder name: the request id when it is a plain
// word (as the CLI's are), else a fresh random one.
func Name(requestID string) string {
	ok := requestID != "" && len(requestID) <= 64
	for _, r := range requestID {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			ok = false
			break
		}
	}
	if !ok {
		requestID = random.ID()
	}
	return Prefix + strings.ToLower(requestID)
}

// ErrHalfJoined says that a process is in some of a run's cgroups and
// could not be moved back out (see Attach): it must not run.
var ErrHalfJoined = errors.New("moving the init process back out of the cgroups it had entered failed")
