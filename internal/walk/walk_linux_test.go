package walk

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

// TestWalkDepthCap nests folders below a root: a tree MaxDepth levels
// deep is walked, one deeper ends the walk with an error (the walk holds
// a descriptor per level; the cap bounds them).
func TestWalkDepthCap(t *testing.T) {
	cases := []struct {
		name    string
		depth   int
		wantErr bool
	}{
		{"at the cap", MaxDepth, false},
		{"past the cap", MaxDepth + 1, true},
	}
	for _, c := range cases {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, strings.Repeat("d/", c.depth)), 0o755); err != nil {
			t.Fatal(err)
		}
		folders := 0
		err := NoFollow(root, func(_ string, st *unix.Stat_t) bool {
			folders++
			return true
		})
		if (err != nil) != c.wantErr || !c.wantErr && folders != c.depth+1 {
			t.Errorf("%s (%d levels): %d folders, error %v; want error %v", c.name, c.depth, folders, err, c.wantErr)
		}
	}
}
