package run

// The values of Result.LimitExceeded.
const (
	LimitWorkDirBytes  = "workdir_bytes"  // the work folder passed WorkDirMB on the host disk
	LimitWorkDirInodes = "workdir_inodes" // the work folder passed its inode cap on the host disk
	LimitMemory        = "memory"         // the run's processes passed MemoryMB without a cgroup
	LimitWriteBytes    = "write_bytes"    // the write grants grew by more than WriteMB
)

// watchPlan is what the watch checks; a zero cap is not checked.
type watchPlan struct {
	dir       string // the work folder on the host disk; "" when it is a tmpfs
	maxBytes  int64  // bytes of disk blocks under dir, and held deleted files
	maxInodes int64  // entries under dir, dir itself included
	maxMemory int64  // private resident bytes of the run's processes; 0 with a cgroup
	pidNSLink string // the init stage's PID namespace (started.pidNSLink), with one
	// grants are the write grants, whose disk blocks may grow by at most
	// maxGrowth over grantBase, what they held when the run started.
	grants    []string
	grantBase int64
	maxGrowth int64
}

// active reports whether there is anything to watch.
func (w watchPlan) active() bool { return w.dir != "" || w.maxMemory > 0 || len(w.grants) > 0 }

// watchInodes matches the inode cap of the work folder's tmpfs
// (tmpfsOptions), so a run gets the same caps with either.
func watchInodes(mb int) int64 { return int64(max(mb*64, 1024)) }
