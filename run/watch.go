package run

import "github.com/skill-sandbox/skill-sandbox/run/internal/watch"

// The values of Result.LimitExceeded.
const (
	LimitWorkDirBytes  = watch.WorkDirBytes  // the work folder passed WorkDirMB on the host disk
	LimitWorkDirInodes = watch.WorkDirInodes // the work folder passed its inode cap on the host disk
	LimitMemory        = watch.Memory        // the run's processes passed MemoryMB without a cgroup (gvisor: see docs/backends.md)
	LimitWriteBytes    = watch.WriteBytes    // the write grants grew by more than WriteMB
)
