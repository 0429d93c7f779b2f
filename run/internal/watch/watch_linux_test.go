package watch

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"

	"golang.org/x/sys/unix"
)

// TestTreeUsage checks the walk's arithmetic: hard links count once, and
// a folder it cannot read counts as over the cap.
func TestTreeUsage(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), make([]byte, 1<<20), 0o644)
	os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "c"), make([]byte, 1<<20), 0o644)
	cases := []struct {
		name              string
		maxBytes, maxInos int64
		wantOver          bool
	}{
		{"within", 8 << 20, 100, false},
		{"bytes", 1 << 20, 100, true},
		{"inodes", 8 << 20, 3, true},
	}
	for _, c := range cases {
		bytes, inodes, over := treeUsage(dir, c.maxBytes, c.maxInos)
		if over != c.wantOver {
			t.Errorf("%s: over %v, want %v (bytes %d inodes %d)", c.name, over, c.wantOver, bytes, inodes)
		}
		if !c.wantOver && (inodes != 5 || bytes < 2<<20 || bytes > 3<<20) {
			t.Errorf("%s: bytes %d inodes %d, want 2-3 MiB (the hard link once) and 5 entries", c.name, bytes, inodes)
		}
	}
	if os.Geteuid() != 0 {
		os.Chmod(filepath.Join(dir, "sub"), 0)
		defer os.Chmod(filepath.Join(dir, "sub"), 0o755)
		if _, _, over := treeUsage(dir, 8<<20, 100); !over {
			t.Errorf("an unreadable folder did not count as over the cap")
		}
	}
}

// TestStatmHasMemory checks which statm lines mark a process without an
// address space (one in its exit, which the watch must not take for a
// process hiding its descriptors), and that a doubt counts as memory.
func TestStatmHasMemory(t *testing.T) {
	cases := []struct {
		statm string
		want  bool
	}{
		{"0 0 0 0 0 0 0\n", false},
		{"6425 3120 1510 1 0 2330 0\n", true},
		{"", true},
		{"x 0 0\n", true},
		{"-1 0\n", true},
	}
	for _, c := range cases {
		if got := statmHasMemory([]byte(c.statm)); got != c.want {
			t.Errorf("statmHasMemory(%q) = %v, want %v", c.statm, got, c.want)
		}
	}
}

// TestHoldsFiles checks holdsFiles on real processes: a live one may hold
// descriptors, a zombie (no memory, descriptors closed) may not.
func TestHoldsFiles(t *testing.T) {
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	defer live.Wait()
	defer live.Process.Kill()
	if !holdsFiles(live.Process.Pid) {
		t.Errorf("a live process does not count as holding files")
	}
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	// WNOWAIT waits for its exit and leaves it a zombie until Wait.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, zombie.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if holdsFiles(zombie.Process.Pid) {
		t.Errorf("a zombie counts as holding files")
	}
}

// FuzzStatmHasMemory checks that no statm line makes the reader panic,
// and that only a leading 0 means no memory.
func FuzzStatmHasMemory(f *testing.F) {
	for _, s := range []string{"0 0 0 0 0 0 0\n", "12 3 4 1 0 5 0\n", "", " ", "0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fields := strings.Fields(s)
		if !statmHasMemory([]byte(s)) && (len(fields) == 0 || strings.TrimLeft(fields[0], "0") != "") {
			t.Fatalf("%q reads as no memory", s)
		}
	})
}

// BenchmarkGrantsUsage walks a write grant of 10,000 files in 100
// folders, as the watch does every ProcEvery ticks.
func BenchmarkGrantsUsage(b *testing.B) {
	root := b.TempDir()
	for i := range 100 {
		d := filepath.Join(root, strconv.Itoa(i))
		os.Mkdir(d, 0o755)
		for j := range 100 {
			os.WriteFile(filepath.Join(d, strconv.Itoa(j)), []byte("x"), 0o644)
		}
	}
	for b.Loop() {
		GrantsUsage([]string{root}, 1<<40)
	}
}

// TestProcSetTree checks Plan.Tree's set: the init process and its
// descendants, a grandchild included, and nothing else of the host.
func TestProcSetTree(t *testing.T) {
	sh := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := sh.Start(); err != nil {
		t.Skip("no sh:", err)
	}
	defer func() { sh.Process.Kill(); sh.Wait() }()
	ps := newProcSet(os.Getpid(), false, "")
	ps.tree = true
	want := map[int]bool{os.Getpid(): true, sh.Process.Pid: true}
	var got []int
	for range 100 {
		// Twice per look: a pid seen before its parent waits a list.
		ps.list()
		got = ps.list()
		if len(got) >= 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	grandchild := false
	for _, pid := range got {
		if pid == 1 {
			t.Fatalf("pid 1 in the tree of %d: %v", os.Getpid(), got)
		}
		if !want[pid] {
			f := proc.StatFields(strconv.Itoa(pid))
			grandchild = grandchild || len(f) > 1 && f[1] == strconv.Itoa(sh.Process.Pid)
		}
	}
	if !grandchild || !slices.Contains(got, sh.Process.Pid) {
		t.Fatalf("tree %v lacks sh %d or its sleep", got, sh.Process.Pid)
	}
}

// TestInGrant checks how a file held unlinked is told to lie in a write
// grant by its former path, on a device the work folder shares with the
// grants: below a grant, not a sibling whose name starts alike, and
// below the root the run's processes see the host's at (HeldRoot).
func TestInGrant(t *testing.T) {
	for _, tc := range []struct {
		root, path string
		want       bool
	}{
		{"", "/tmp/out/f", true},
		{"", "/tmp/out", true},
		{"", "/tmp/output/f", false},
		{"", "/tmp/work/f", false},
		{"/root", "/root/tmp/out/f", true},
		{"/root", "/root/tmp/work/f", false},
		{"/root", "/tmp/out/f", true},
	} {
		w := &watcher{Plan: Plan{Grants: []string{"/tmp/out", "/srv/data/"}, HeldRoot: tc.root}}
		if got := w.inGrant(tc.path); got != tc.want {
			t.Errorf("root %q, %s: in a grant %v, want %v", tc.root, tc.path, got, tc.want)
		}
	}
}
