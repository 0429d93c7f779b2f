package run

import (
	"strings"
	"time"
)

// cgroupInitAllowance is added to MaxProcs for pids.max: the init stage
// (the reaper and its Go threads) lives in the cgroup too. RLIMIT_NPROC,
// set on the script with the reaper's threads counted exactly, stays the
// tight limit; pids.max is the backstop that also holds without a user
// namespace, where RLIMIT_NPROC counts every process of the host user.
const cgroupInitAllowance = 64

// cpuPeriod is the CPU bandwidth period for cpu.max (and cfs_period_us).
const cpuPeriod = 100 * time.Millisecond

// cgroupLimits is what the run's cgroup enforces; zero fields are not set.
type cgroupLimits struct {
	MemoryBytes int64   // memory.max, swap 0
	Pids        int64   // pids.max
	CPUs        float64 // cpu.max quota in CPUs per period
}

// cgroupStats are read from the cgroup after the run.
type cgroupStats struct {
	PeakBytes int64 // highest memory charge; 0 when the kernel does not say
	OOMKills  int64 // processes the cgroup's OOM killer killed
}

// cgroupPrefix starts the name of every run's cgroup.
const cgroupPrefix = "skill-sandbox-"

// cgroupName is the run's cgroup folder name: the request id when it is a
// plain word (as the CLI's are), else a fresh random one.
func cgroupName(requestID string) string {
	ok := requestID != "" && len(requestID) <= 64
	for _, r := range requestID {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			ok = false
			break
		}
	}
	if !ok {
		requestID = newRequestID()
	}
	return cgroupPrefix + strings.ToLower(requestID)
}
