package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// fileTimes returns the atime and mtime of p (not following a symlink),
// for resetTimes.
func fileTimes(t *testing.T, p string) []unix.Timespec {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return []unix.Timespec{st.Atim, st.Mtim}
}

// resetTimes sets p's atime and mtime back, as a script hiding a change
// does (utimensat, as touch -d and os.utime do).
func resetTimes(p string, ts []unix.Timespec) error {
	return unix.UtimesNanoAt(unix.AT_FDCWD, p, ts, unix.AT_SYMLINK_NOFOLLOW)
}

// forgery is one way a script can change a file and hide it from size,
// mtime, inode and mode: setup makes the files before the snapshot, hide
// changes them after it, want is the artifacts expected (file name to
// action).
type forgery struct {
	name  string
	setup func(t *testing.T, dir string)
	hide  func(t *testing.T, dir string) error
	want  map[string]string
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// oneFile is a setup that writes file f with "hello world".
func oneFile(t *testing.T, dir string) { writeFile(t, filepath.Join(dir, "f"), "hello world") }

// forgeries lists the tricks TestArtifactsForgery tries.
func forgeries() []forgery {
	f := func(dir string) string { return filepath.Join(dir, "f") }
	modified := map[string]string{"f": Modified}
	return []forgery{
		{"same-size rewrite in place, times reset", oneFile, func(t *testing.T, dir string) error {
			ts := fileTimes(t, f(dir))
			h, err := os.OpenFile(f(dir), os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			_, err = h.WriteAt([]byte("HELLO"), 0)
			h.Close()
			if err != nil {
				return err
			}
			return resetTimes(f(dir), ts)
		}, modified},
		{"truncated and rewritten, times reset", oneFile, func(t *testing.T, dir string) error {
			ts := fileTimes(t, f(dir))
			if err := os.WriteFile(f(dir), []byte("jello world"), 0o644); err != nil {
				return err
			}
			return resetTimes(f(dir), ts)
		}, modified},
		{"written through a shared mapping, times reset", oneFile, func(t *testing.T, dir string) error {
			ts := fileTimes(t, f(dir))
			h, err := os.OpenFile(f(dir), os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer h.Close()
			m, err := unix.Mmap(int(h.Fd()), 0, 11, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			if err != nil {
				return err
			}
			m[0] = 'J'
			if err := unix.Msync(m, unix.MS_SYNC); err != nil {
				return err
			}
			if err := unix.Munmap(m); err != nil {
				return err
			}
			return resetTimes(f(dir), ts)
		}, modified},
		{"extended attribute set", oneFile, func(t *testing.T, dir string) error {
			return unix.Lsetxattr(f(dir), "user.planted", []byte("x"), 0)
		}, modified},
		{"extended attribute removed", func(t *testing.T, dir string) {
			oneFile(t, dir)
			if err := unix.Lsetxattr(f(dir), "user.kept", []byte("x"), 0); err != nil {
				t.Skipf("user extended attributes here: %v", err)
			}
		}, func(t *testing.T, dir string) error {
			return unix.Lremovexattr(f(dir), "user.kept")
		}, modified},
		{"mode changed and back", oneFile, func(t *testing.T, dir string) error {
			if err := os.Chmod(f(dir), 0o4777); err != nil {
				return err
			}
			return os.Chmod(f(dir), 0o644)
		}, modified},
		{"owner set to itself", oneFile, func(t *testing.T, dir string) error {
			return os.Lchown(f(dir), os.Getuid(), os.Getgid())
		}, modified},
		{"hard link made", oneFile, func(t *testing.T, dir string) error {
			return os.Link(f(dir), filepath.Join(dir, "g"))
		}, map[string]string{"f": Modified, "g": Created}},
		{"hard link made and removed", oneFile, func(t *testing.T, dir string) error {
			if err := os.Link(f(dir), filepath.Join(dir, "g")); err != nil {
				return err
			}
			return os.Remove(filepath.Join(dir, "g"))
		}, modified},
		{"renamed over by a twin with its times", oneFile, func(t *testing.T, dir string) error {
			ts := fileTimes(t, f(dir))
			twin := filepath.Join(dir, ".twin")
			if err := os.WriteFile(twin, []byte("jello world"), 0o644); err != nil {
				return err
			}
			if err := os.Chmod(twin, 0o644); err != nil {
				return err
			}
			if err := resetTimes(twin, ts); err != nil {
				return err
			}
			return os.Rename(twin, f(dir))
		}, modified},
		{"deleted and made again (inode reuse), times reset", oneFile, func(t *testing.T, dir string) error {
			ts := fileTimes(t, f(dir))
			var before unix.Stat_t
			unix.Lstat(f(dir), &before)
			if err := os.Remove(f(dir)); err != nil {
				return err
			}
			if err := os.WriteFile(f(dir), []byte("jello world"), 0o644); err != nil {
				return err
			}
			var after unix.Stat_t
			unix.Lstat(f(dir), &after)
			t.Logf("inode %d, then %d", before.Ino, after.Ino)
			return resetTimes(f(dir), ts)
		}, modified},
		{"symlink pointed elsewhere, times reset", func(t *testing.T, dir string) {
			if err := os.Symlink("aaaa", f(dir)); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, dir string) error {
			ts := fileTimes(t, f(dir))
			tmp := filepath.Join(dir, ".l")
			if err := os.Symlink("bbbb", tmp); err != nil {
				return err
			}
			if err := resetTimes(tmp, ts); err != nil {
				return err
			}
			return os.Rename(tmp, f(dir))
		}, modified},
		{"changed just before the snapshot and within its clock tick", func(t *testing.T, dir string) {
			oneFile(t, dir)
		}, func(t *testing.T, dir string) error {
			ts := fileTimes(t, f(dir))
			if err := os.WriteFile(f(dir), []byte("jello world"), 0o644); err != nil {
				return err
			}
			return resetTimes(f(dir), ts)
		}, modified},
		{"read only: nothing changed", oneFile, func(t *testing.T, dir string) error {
			_, err := os.ReadFile(f(dir))
			return err
		}, map[string]string{}},
	}
}

// TestArtifactsForgery tries each way a script can change a file in a
// write grant while keeping its size, mtime, inode number and mode: every
// change is listed, and a changed file's hash is its new content. Before
// the record compared ctime, a same-size rewrite with the times reset, an
// xattr change, a chmod and back, a hard link and an inode reused were
// not listed (artifacts: []).
func TestArtifactsForgery(t *testing.T) {
	for _, c := range forgeries() {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir)
			before := Take([]string{dir})
			before.Settle()
			if err := c.hide(t, dir); err != nil {
				if errors.Is(err, unix.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) {
					t.Skipf("this file system refuses the trick: %v", err)
				}
				t.Fatal(err)
			}
			got := Diff(before, Take([]string{dir}))
			listed := map[string]File{}
			for _, a := range got.Files {
				listed[filepath.Base(a.Path)] = a
			}
			for name, action := range c.want {
				a, ok := listed[name]
				if !ok || a.Action != action {
					t.Errorf("%s: listed %v as %q, want %q (artifacts %+v)", name, ok, a.Action, action, got.Files)
					continue
				}
				if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil && a.Type == "file" && a.SHA256 != sha256Hex(data) {
					t.Errorf("%s: sha256 %s, not its content's", name, a.SHA256)
				}
			}
			if len(got.Files) != len(c.want) {
				t.Errorf("artifacts %+v, want %v", got.Files, c.want)
			}
		})
	}
}

// TestSettle: after settle, the clock that stamps ctimes is past the
// newest ctime of the snapshot, so a change made then gets another one.
// A ctime far ahead (a clock set back) does not make it wait for it.
func TestSettle(t *testing.T) {
	s := &Snapshot{newest: fileClock()}
	s.Settle()
	if now := fileClock(); now <= s.newest {
		t.Errorf("after settle the file clock reads %d, not past the snapshot's newest ctime %d", now, s.newest)
	}
	ahead := &Snapshot{newest: fileClock() + int64(24*3600e9)}
	ahead.Settle() // returns at once: would otherwise wait a day
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
