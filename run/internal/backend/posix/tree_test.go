package posix

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestDescendants(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table map[int]int
		root  int
		want  []int
	}{
		{"none", map[int]int{1: 0, 10: 1}, 10, nil},
		{"chain", map[int]int{1: 0, 10: 1, 11: 10, 12: 11, 13: 12}, 10, []int{11, 12, 13}},
		{"tree", map[int]int{1: 0, 10: 1, 11: 10, 12: 10, 13: 11, 14: 12, 20: 1, 21: 20}, 10, []int{11, 12, 13, 14}},
		{"siblings untouched", map[int]int{1: 0, 10: 1, 11: 1, 12: 11}, 10, nil},
		{"orphan reparented to 1 is lost", map[int]int{1: 0, 10: 1, 12: 1}, 10, nil},
		{"self-parented", map[int]int{0: 0, 1: 1, 10: 1, 11: 10}, 1, []int{10, 11}},
		{"cycle", map[int]int{10: 11, 11: 10, 12: 11}, 10, []int{11, 12}},
		{"root absent", map[int]int{1: 0, 11: 10}, 10, []int{11}},
	} {
		if got := Descendants(tc.table, tc.root); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDescendantsOfRealTree builds the table from this host's /proc (the
// darwin code reads sysctl instead) for a real tree of sh and sleep, and
// checks that exactly the tree is found.
func TestDescendantsOfRealTree(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to list processes")
	}
	cmd := exec.Command("sh", "-c", "sleep 30 & sh -c 'sleep 30 & wait' & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var got []int
	for try := 0; try < 200 && len(got) < 3; try++ {
		got = Descendants(procTable(t), cmd.Process.Pid)
	}
	if len(got) != 3 {
		t.Fatalf("found %v under %d, want sleep, sh, sleep", got, cmd.Process.Pid)
	}
	for _, pid := range got {
		for p := pid; p != cmd.Process.Pid; {
			parent, ok := procTable(t)[p]
			if !ok || parent <= 1 {
				t.Fatalf("%d is not below %d", pid, cmd.Process.Pid)
			}
			p = parent
		}
	}
	for _, pid := range got {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
}

func procTable(t *testing.T) map[int]int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	table := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parens.
		rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
		if f := strings.Fields(rest); len(f) > 1 {
			ppid, _ := strconv.Atoi(f[1])
			table[pid] = ppid
		}
	}
	return table
}
