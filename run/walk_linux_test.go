package run

import (
	"os"
	"path/filepath"
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
