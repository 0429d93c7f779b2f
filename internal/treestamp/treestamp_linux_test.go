package treestamp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestTree(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "a")
	if err := os.WriteFile(f, []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Tree(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := Tree(dir, 10); b != a {
		t.Errorf("stamp of an unchanged tree changed: %v %v", a, b)
	}
	st, _ := os.Stat(f)
	// Same size, mtime set back: the ctime still changes the stamp.
	if err := os.WriteFile(f, []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(f, st.ModTime(), st.ModTime())
	if b, _ := Tree(dir, 10); b.Sum == a.Sum {
		t.Error("a rewrite with the mtime set back kept the stamp")
	}
	if _, err := Tree(dir, 0); !errors.Is(err, ErrTooMany) {
		t.Errorf("bound: %v", err)
	}
}

func TestLocks(t *testing.T) {
	dir := t.TempDir()
	release := LockShared(dir)
	if _, ok := TryLockExclusive(dir); ok {
		t.Error("exclusive lock taken while a shared one is held")
	}
	release()
	unlock, ok := TryLockExclusive(dir)
	if !ok {
		t.Fatal("no exclusive lock once the shared one is released")
	}
	unlock()
}

// TestLockSharedFollowsReplacement: a run waits for the shared lock
// while an eviction holds the exclusive one, renames the folder aside
// and a build puts a new one at the same path. The run's lock must be
// on the folder now at the path (the one it then checks and uses), or
// the next eviction removes that folder while the run uses it.
func TestLockSharedFollowsReplacement(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "env")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, ok := TryLockExclusive(dir)
	if !ok {
		t.Fatal("no exclusive lock on a fresh folder")
	}
	got := make(chan func(), 1)
	go func() { got <- LockShared(dir) }()
	time.Sleep(100 * time.Millisecond) // LockShared has opened the first folder and waits
	if err := os.Rename(dir, filepath.Join(base, "evicted")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil { // the new build
		t.Fatal(err)
	}
	unlock()
	release := <-got
	defer release()
	if unlock2, ok := TryLockExclusive(dir); ok {
		unlock2()
		t.Fatal("the folder at the path is not locked by LockShared: an eviction could remove it while in use")
	}
}
