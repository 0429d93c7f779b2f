package realpath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestExisting(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(base, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "real"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{filepath.Join(base, "link"), filepath.Join(base, "real")},
		{filepath.Join(base, "link", "a", "b"), filepath.Join(base, "real", "a", "b")},
		{filepath.Join(base, "real", "x"), filepath.Join(base, "real", "x")},
		{"/", "/"},
	} {
		if got := Existing(c.in); got != c.want {
			t.Errorf("Existing(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
