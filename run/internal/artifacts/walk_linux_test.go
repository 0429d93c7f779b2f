package artifacts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWalkErr checks which errors end a walk: a folder removed while it
// is read (getdents fails with ENOENT, as LibreOffice's temporary folders
// in a kept work folder are) or an entry swapped for a symlink or a file
// is skipped; anything else is returned.
func TestWalkErr(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	_, readErr := f.Readdirnames(1)
	cases := []struct {
		name string
		err  error
		skip bool
	}{
		{"readdir of a removed folder", readErr, true},
		{"vanished", unix.ENOENT, true},
		{"now a file", unix.ENOTDIR, true},
		{"now a symlink", unix.ELOOP, true},
		{"unreadable", unix.EACCES, false},
		{"too many open files", unix.EMFILE, false},
	}
	for _, c := range cases {
		if got := walkErr("/x", c.err); (got == nil) != c.skip {
			t.Errorf("%s (%v): walkErr %v, want skipped %v", c.name, c.err, got, c.skip)
		}
	}
}

// TestWalkParentSwapped swaps a folder above an artifact root for a
// symlink after the root was resolved, as a script of another run that
// may write above the root (a shared write grant) can: the snapshot of
// the root must not list what the symlink leads to. Opening the root by
// its path (its last name only without following a symlink) listed the
// other folder's names and sizes.
func TestWalkParentSwapped(t *testing.T) {
	base, elsewhere := t.TempDir(), t.TempDir()
	root := filepath.Join(base, "shared", "run1")
	for _, d := range []string{root, filepath.Join(elsewhere, "run1")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "run1", "secret"), []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "mine"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if snap := Take([]string{root}); snap.truncated || len(snap.files) != 1 {
		t.Fatalf("before the swap: %d files, truncated %v; want 1, false", len(snap.files), snap.truncated)
	}
	// The swap: base/shared becomes a symlink to elsewhere.
	if err := os.Rename(filepath.Join(base, "shared"), filepath.Join(base, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(base, "shared")); err != nil {
		t.Fatal(err)
	}
	snap := Take([]string{root})
	for p := range snap.files {
		t.Errorf("the snapshot of %s lists %s, reached through a symlinked parent", root, p)
	}
	if !snap.truncated {
		t.Errorf("a symlink above the root did not mark the snapshot truncated")
	}
	if f, err := openNoFollow(filepath.Join(root, "secret")); err == nil {
		f.Close()
		t.Errorf("opened %s through a symlinked parent", filepath.Join(root, "secret"))
	}
}

// TestWalkDepthCap nests folders below a root: a tree maxWalkDepth levels
// deep is walked, one deeper ends the walk with an error (the walk holds
// a descriptor per level; the cap bounds them).
func TestWalkDepthCap(t *testing.T) {
	cases := []struct {
		name    string
		depth   int
		wantErr bool
	}{
		{"at the cap", maxWalkDepth, false},
		{"past the cap", maxWalkDepth + 1, true},
	}
	for _, c := range cases {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, strings.Repeat("d/", c.depth)), 0o755); err != nil {
			t.Fatal(err)
		}
		folders := 0
		err := WalkNoFollow(root, func(_ string, st *unix.Stat_t) bool {
			folders++
			return true
		})
		if (err != nil) != c.wantErr || !c.wantErr && folders != c.depth+1 {
			t.Errorf("%s (%d levels): %d folders, error %v; want error %v", c.name, c.depth, folders, err, c.wantErr)
		}
	}
}
