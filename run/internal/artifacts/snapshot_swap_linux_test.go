package artifacts

import (
	"os"
	"path/filepath"
	"testing"
)

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
