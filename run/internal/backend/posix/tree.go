package posix

import "sort"

// Descendants returns, sorted, the pids whose parent chain in table (pid →
// parent pid) leads to root, root excluded. A platform without a PID
// namespace (macOS) finds a run's processes this way. Cycles and
// self-parented entries (pid 0 and 1 on some systems) end the walk.
func Descendants(table map[int]int, root int) []int {
	children := map[int][]int{}
	for pid, parent := range table {
		if pid != parent {
			children[parent] = append(children[parent], pid)
		}
	}
	seen := map[int]bool{root: true}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	sort.Ints(out)
	return out
}
