package watch

// The caps Run reports passed: the values of run.Result.LimitExceeded.
const (
	WorkDirBytes  = "workdir_bytes"  // the work folder passed its byte cap on the host disk
	WorkDirInodes = "workdir_inodes" // the work folder passed its inode cap on the host disk
	Memory        = "memory"         // the run's processes passed MaxMemory without a cgroup
	WriteBytes    = "write_bytes"    // the write grants grew by more than MaxGrowth
)

// Plan is what the watch checks; a zero cap is not checked.
type Plan struct {
	Dir       string // the work folder on the host disk; "" when it is a tmpfs
	MaxBytes  int64  // bytes of disk blocks under Dir, and held deleted files
	MaxInodes int64  // entries under Dir, Dir itself included
	MaxMemory int64  // private resident bytes of the run's processes; 0 with a cgroup
	PIDNSLink string // the init process's PID namespace (PIDNSLink), with one
	// Tree says the run's processes are the init process and its
	// descendants, told by their parent pids: for an outside runtime's
	// process (runsc), whose sandbox and gofer hold the run's files on
	// the host and whose namespaces the supervisor does not know.
	Tree bool
	// HeldRoot is where the run's processes see the host's root, when
	// not at "/": runsc 20221219's gofer and Sentry name a host file
	// /root/PATH in their descriptors' links (see watcher.inGrant).
	HeldRoot string
	// Grants are the write grants, whose disk blocks may grow by at most
	// MaxGrowth over GrantBase, what they held when the run started.
	Grants    []string
	GrantBase int64
	MaxGrowth int64
}

// Active reports whether there is anything to watch.
func (p Plan) Active() bool { return p.Dir != "" || p.MaxMemory > 0 || len(p.Grants) > 0 }

// InodeCap matches the inode cap of the work folder's tmpfs (initplan's
// tmpfsOptions) for a work folder of mb MiB, so a run gets the same caps
// with either.
func InodeCap(mb int) int64 { return int64(max(mb*64, 1024)) }
