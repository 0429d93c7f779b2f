package plan

import (
	"math"

	"golang.org/x/sys/unix"

	"os"
	"strconv"
	"strings"
)

// runCPUs returns the CPUs a run limited to cpus CPUs (Request.CPUs) is
// pinned to and shown: the first ceil(cpus) of those this process may use,
// so that programs that size a pool by the CPU count (nproc, joblib's
// n_jobs=-1, os.availableParallelism) start as many workers as the
// run's bandwidth (cpu.max) can keep busy. None when cpus is 0 (no limit)
// or the limit covers every CPU this process has: the run then keeps the
// affinity it inherits.
func runCPUs(cpus float64) []int {
	if cpus <= 0 {
		return nil
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	want := int(math.Ceil(cpus))
	if want >= set.Count() {
		return nil
	}
	var out []int
	for n := 0; len(out) < want && n < len(set)*64; n++ {
		if set.IsSet(n) {
			out = append(out, n)
		}
	}
	return out
}

// MaxUserWatches reads fs.epoll.max_user_watches; 0 when it cannot.
func MaxUserWatches() int {
	b, err := os.ReadFile("/proc/sys/fs/epoll/max_user_watches")
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
