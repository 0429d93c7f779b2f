package reaper

import "os"

// The OOM killer of a run's cgroup must pick the script, not the reaper
// (PID 1): a killed reaper takes the whole run with it and loses the
// script's status, and when memory is held in memfds or tmpfs files no
// process's resident size says who holds it, so the kernel's choice would
// be arbitrary. The reaper therefore starts the script with
// oom_score_adj 1000 (inherited at fork) and goes back to 0 itself; any
// process may raise its own score, and lower it only down to 0, so the
// script (and everything it starts) is always the first candidate, unless
// it lowers its own score to the reaper's, which can only spoil its own
// run. The file is opened before Landlock, which makes /proc read-only.

// OpenOOMScore opens this process's oom_score_adj for the reaper; nil
// when it cannot (the preference is then not set).
func OpenOOMScore() *os.File {
	f, err := os.OpenFile("/proc/self/oom_score_adj", os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	return f
}

// setOOMScore writes v to the open oom_score_adj file, if any; failures
// are ignored (the preference is best effort).
func setOOMScore(f *os.File, v string) {
	if f != nil {
		f.WriteAt([]byte(v), 0)
	}
}
