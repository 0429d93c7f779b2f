package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// sandboxIDWords is what an error names a root caller's sandbox identity
// by: its own id's description, or uid 65534 in a nested namespace.
func sandboxIDWords() string {
	if ownRunIDs() {
		return "the run's own host id"
	}
	return "uid 65534"
}

// TestParseHostIDs: the ids of the account files that fall in the block
// are skipped, ranges clipped to it, and malformed lines ignored.
func TestParseHostIDs(t *testing.T) {
	last := RunIDFirst + RunIDCount - 1
	for _, c := range []struct {
		name     string
		sub      bool
		text     string
		in, free []uint32
	}{
		{"passwd", false, "root:x:0:0:root:/root:/bin/bash\nodd:x:2130706433:1::/:/bin/sh\nbad:x:nope:1::/:\nshort:x\n", []uint32{RunIDFirst + 1}, []uint32{RunIDFirst, 0}},
		{"group", false, "g:x:2130771967:\n", []uint32{uint32(last)}, []uint32{RunIDFirst}},
		{"subuid below", true, "u:100000:65536\n", nil, []uint32{RunIDFirst, 100000}},
		{"subuid overlapping the start", true, "u:2130705712:1000\n", []uint32{RunIDFirst, RunIDFirst + 279}, []uint32{RunIDFirst + 280}},
		{"subuid over the whole block", true, "u:1879048192:2415919102\n", []uint32{RunIDFirst, uint32(last)}, nil},
		{"subuid malformed", true, "u:x:1\nu:2130706432:0\nu:2130706432\n\n", nil, []uint32{RunIDFirst}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := parseIDLines([]byte(c.text), c.sub)
			for _, id := range c.in {
				if !s.has(id) {
					t.Errorf("%d not listed: %+v", id, s)
				}
			}
			for _, id := range c.free {
				if s.has(id) {
					t.Errorf("%d listed: %+v", id, s)
				}
			}
		})
	}
}

// FuzzParseIDLines: any text parses without a panic, into ranges within
// the block.
func FuzzParseIDLines(f *testing.F) {
	f.Add([]byte("u:2130705712:1000\nroot:x:2130706433:0::/:\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range []idSet{parseIDLines(b, true), parseIDLines(b, false)} {
			for _, r := range s {
				if !inRunIDs(r.inside) || !inRunIDs(r.inside+r.count-1) || r.count == 0 {
					t.Fatalf("range %+v outside the block", r)
				}
			}
		}
	})
}

// TestRunIDLock: two takes never get the same id while the first holds
// it, and a lock folder that is not root's with mode 0700 (one another
// user made, or a symlink) is refused.
func TestRunIDLock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root takes run ids")
	}
	base := filepath.Join(t.TempDir(), "base")
	held := map[int]bool{}
	var ids []*runID
	for range 200 {
		id, err := takeRunID(base)
		if err != nil {
			t.Fatal(err)
		}
		if held[id.id] || !inRunIDs(uint32(id.id)) {
			t.Fatalf("id %d taken twice or outside the block", id.id)
		}
		held[id.id] = true
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
	if ids[0].release(); ids[0].lock != -1 {
		t.Error("release kept the descriptor")
	}
	for _, id := range ids {
		id.release()
	}
	// Released, the file is gone: a take that locked the old one
	// meanwhile (fd) would not count it as held.
	if ents, err := os.ReadDir(filepath.Join(base, runIDLockDir)); err != nil || len(ents) != 0 {
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
			dir := filepath.Join(base, runIDLockDir)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := c.plant(dir); err != nil {
				t.Fatal(err)
			}
			if id, err := takeRunID(base); err == nil {
				id.release()
				t.Fatalf("took id %d in a planted folder", id.id)
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
	// In /run, a tmpfs, as runIDLockBase is.
	tmp, err := os.MkdirTemp("/run", "skill-sandbox-bench-")
	if err != nil {
		b.Skipf("no folder in /run: %v", err)
	}
	b.Cleanup(func() { os.RemoveAll(tmp) })
	base := filepath.Join(tmp, "base")
	for b.Loop() {
		id, err := takeRunID(base)
		if err != nil {
			b.Fatal(err)
		}
		id.release()
	}
}

// TestUnmappedWriteKeepsNobody: a run whose write grant is written as the
// sandbox identity itself (a folder of nobody's, or any without a mount
// namespace) keeps nobody, so that the next run can write it too; other
// runs get ids of their own.
func TestUnmappedWriteKeepsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root caller's runs get ids of their own")
	}
	base := t.TempDir()
	own, nobodys := filepath.Join(base, "own"), filepath.Join(base, "nobody")
	for _, d := range []string{own, nobodys} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(nobodys, nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
	uid, gid := sandboxIdentity()
	for _, c := range []struct {
		name string
		sb   Sandbox
		want bool
	}{
		{"no write grant", Sandbox{ReadPaths: []string{nobodys}}, false},
		{"root's folder", Sandbox{WritePaths: []string{own}}, false},
		{"nobody's folder", Sandbox{WritePaths: []string{own, nobodys}}, true},
		{"without a mount namespace", Sandbox{WritePaths: []string{own}, Disable: []Layer{LayerMountNS}}, true},
		{"to be made", Sandbox{WritePaths: []string{filepath.Join(own, "a", "b")}}, !canMapWrite(own, uid, gid)},
	} {
		if got := c.sb.unmappedWrite(); got != c.want {
			t.Errorf("%s: unmappedWrite %v, want %v", c.name, got, c.want)
		}
	}
}
