package watch

import (
	"os"
	"slices"
	"strconv"
	"strings"
)

// anonResident adds up the anonymous resident memory of the processes
// from statm (resident minus file-backed and shared), a cheap upper bound
// of privateMemory: a page shared after fork counts in every sharer.
func anonResident(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		total += anonResidentOf(pid)
	}
	return total
}

// anonResidentOf is anonResident of one process: its resident anonymous
// and shared-memory pages (RssAnon plus RssShmem: a MAP_SHARED anonymous
// mapping is shmem, which statm counts as shared with the files); status
// is readable whatever the process's dumpable flag. 0 when it is gone.
func anonResidentOf(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	return sumKB(string(data), "RssAnon:", "RssShmem:")
}

// sumKB adds up the "Name: N kB" lines of text named in names, in bytes.
func sumKB(text string, names ...string) int64 {
	var total int64
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || !slices.Contains(names, f[0]) {
			continue
		}
		if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 {
			total += kb << 10
		}
	}
	return total
}

// privateMemory adds up the anonymous memory of the processes, each page
// shared after fork split among its sharers (smaps_rollup: Pss_Anon and
// Pss_Shmem, the pages of MAP_SHARED anonymous mappings and of mapped
// tmpfs files, plus SwapPss for what was swapped out), so the sum is what
// the run really holds and a forked worker pool is not counted once per
// worker. Files mapped in (libraries, the host's) do not count; memory in
// tmpfs files counts under the tmpfs caps, and memfd_create and System V
// shared memory are refused without a cgroup (see
// seccomp.Policy.NoMemCgroup).
//
// smaps_rollup needs ptrace access, which a process that is not dumpable
// denies an unprivileged supervisor without a user namespace: such a
// process counts with its statm figure (anonResidentOf), which it cannot
// hide, rather than not at all.
func privateMemory(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
		if err != nil {
			total += anonResidentOf(pid)
			continue
		}
		total += sumKB(string(data), "Pss_Anon:", "Pss_Shmem:", "SwapPss:")
	}
	return total
}
