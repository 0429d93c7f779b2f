package artifacts

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skill-sandbox/skill-sandbox/internal/autorun"
)

// TestRenameAsideNamesTaken: a script that made every name renameAside
// would try (name+autorun.QuarantineSuffix, then .1 to .99) before planting
// .envrc kept its .envrc under its live name (red team: the record said
// "failed", the run exited normally, and direnv would load it). The
// rename aside must still happen, to a name the script could not guess.
func TestRenameAsideNamesTaken(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 100; i++ {
		n := ".envrc" + autorun.QuarantineSuffix
		if i > 0 {
			n += "." + strconv.Itoa(i)
		}
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".envrc"), []byte("echo planted\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	parent, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(parent)
	var st unix.Stat_t
	if err := unix.Fstatat(parent, ".envrc", &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		t.Fatal(err)
	}
	aside, err := renameAside(parent, ".envrc", &st)
	if err != nil {
		t.Fatalf("renameAside with the 100 usual names taken: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".envrc")); err == nil {
		t.Errorf(".envrc is still there (aside %q)", aside)
	}
	if autorun.Matches(aside) {
		t.Errorf("aside name %q is itself an auto-run name", aside)
	}
	var now unix.Stat_t
	if err := unix.Fstatat(parent, aside, &now, unix.AT_SYMLINK_NOFOLLOW); err != nil || now.Ino != st.Ino {
		t.Errorf("aside %q: %v, not the planted file", aside, err)
	}
}

// TestSweepPastEntryBound: a script that makes more entries than a
// snapshot walks (MaxEntries; a bound of 10 here) cannot hide a
// planted .git past them (red team: the sweep stopped there, and the .git
// of every folder not yet walked stayed live; reproduced through mcp
// run_command with 12 folders of 10,000 files). Three folders of 6
// entries each: the walk reaches the third only past the bound.
func TestSweepPastEntryBound(t *testing.T) {
	root := t.TempDir()
	since := time.Now()
	for _, d := range []string{"a", "b", "c"} {
		if err := os.MkdirAll(filepath.Join(root, d, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			if err := os.WriteFile(filepath.Join(root, d, strconv.Itoa(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, truncated := Sweep([]string{root}, []string{root}, nil, &Snapshot{files: map[string]fileState{}}, since, 10)
	for _, d := range []string{"a", "b", "c"} {
		if _, err := os.Lstat(filepath.Join(root, d, ".git")); err == nil {
			t.Errorf("%s/.git is still there after the sweep (%d neutralised, truncated %v)", d, len(out), truncated)
		}
	}
}
