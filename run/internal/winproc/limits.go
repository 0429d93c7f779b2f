package winproc

// Limits are the numbers a run's Job Object enforces.
type Limits struct {
	JobMemoryBytes  uint64 // JobMemoryLimit: committed memory of all processes together
	ActiveProcesses uint32 // ActiveProcessLimit: processes alive at once
	// ProcessUserTime is PerProcessUserTimeLimit, in 100 ns units: the
	// CPU time of each process, as RLIMIT_CPU on Linux.
	ProcessUserTime int64
}
