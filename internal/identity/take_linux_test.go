package identity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRunIDLock: two takes never get the same id while the first holds
// it, and a lock folder that is not root's with mode 0700 (one another
// user made, or a symlink) is refused.
func TestRunIDLock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root takes run ids")
	}
	base := filepath.Join(t.TempDir(), "base")
	held := map[int]bool{}
	var ids []*RunID
	for range 200 {
		id, err := Take(base)
		if err != nil {
			t.Fatal(err)
		}
		if held[id.ID] || !IsRunID(uint32(id.ID)) {
			t.Fatalf("id %d taken twice or outside the block", id.ID)
		}
		held[id.ID] = true
		ids = append(ids, id)
	}
	// The lock holds against another open file description, as another
	// supervisor's.
	fd, err := unix.Open(ids[0].path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err == nil {
		t.Error("a held id could be locked again")
	}
	if ids[0].Release(); ids[0].lock != -1 {
		t.Error("release kept the descriptor")
	}
	for _, id := range ids {
		id.Release()
	}
	// Released, the file is gone: a take that locked the old one
	// meanwhile (fd) would not count it as held.
	if ents, err := os.ReadDir(filepath.Join(base, lockDir)); err != nil || len(ents) != 0 {
		t.Errorf("lock files left: %d (%v)", len(ents), err)
	}
	// The old file can be locked now, but a new take makes and locks a
	// file of its own under the name.
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	got, err := lockID(unix.AT_FDCWD, ids[0].path)
	if got < 0 || err != nil {
		t.Fatalf("the id could not be taken again: %v", err)
	}
	var oldSt, newSt unix.Stat_t
	if unix.Fstat(fd, &oldSt) != nil || unix.Fstat(got, &newSt) != nil || oldSt.Ino == newSt.Ino {
		t.Error("the new take locked the released file")
	}
	unix.Close(got)
	unix.Close(fd)

	for _, c := range []struct {
		name  string
		plant func(dir string) error
	}{
		{"another user's base", func(dir string) error { return os.Chown(filepath.Dir(dir), 65534, 65534) }},
		{"another user's folder", func(dir string) error { return os.Chown(dir, 65534, 65534) }},
		{"a folder others may enter", func(dir string) error { return os.Chmod(dir, 0o755) }},
		{"a folder others may write", func(dir string) error { return os.Chmod(dir, 0o777) }},
		{"a symlink", func(dir string) error {
			if err := os.Remove(dir); err != nil {
				return err
			}
			return os.Symlink(t.TempDir(), dir)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "base")
			dir := filepath.Join(base, lockDir)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := c.plant(dir); err != nil {
				t.Fatal(err)
			}
			if id, err := Take(base); err == nil {
				id.Release()
				t.Fatalf("took id %d in a planted folder", id.ID)
			} else if !strings.Contains(err.Error(), "refused") && !strings.Contains(err.Error(), "too many levels") && !strings.Contains(err.Error(), "not a directory") {
				t.Errorf("refusal %v does not say why", err)
			}
		})
	}
}

// BenchmarkTakeRunID is what taking and giving back a run's id costs on
// each start of a root caller's run.
func BenchmarkTakeRunID(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("only root takes run ids")
	}
	// In /run, a tmpfs, as LockBase is.
	tmp, err := os.MkdirTemp("/run", "skill-sandbox-bench-")
	if err != nil {
		b.Skipf("no folder in /run: %v", err)
	}
	b.Cleanup(func() { os.RemoveAll(tmp) })
	base := filepath.Join(tmp, "base")
	for b.Loop() {
		id, err := Take(base)
		if err != nil {
			b.Fatal(err)
		}
		id.Release()
	}
}
