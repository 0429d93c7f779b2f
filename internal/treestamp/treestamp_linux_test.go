package treestamp

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
