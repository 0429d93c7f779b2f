package sign

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// treeStamp returns the stamp of the folder dir and everything below it
// (see VerifiedCache), dir itself included, up to MaxEntries entries. It
// goes by descriptors (fstatat(2) beside each open folder, no path looked
// up twice): a walk of a 3,000-file skill is most of what a cached run
// costs.
func treeStamp(dir string) (stamp, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return stamp{}, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	w := stampWalk{h: sha256.New()}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return stamp{}, err
	}
	w.add(".", &st)
	if err := w.walk(fd, "."); err != nil {
		return stamp{}, fmt.Errorf("%s: %w", dir, err)
	}
	return stamp{sum: hex.EncodeToString(w.h.Sum(nil)), newest: w.newest}, nil
}

// stampWalk is one treeStamp.
type stampWalk struct {
	h      hash.Hash
	newest int64
	n      int
	buf    []byte
}

// add hashes the entry rel described by st.
func (w *stampWalk) add(rel string, st *unix.Stat_t) {
	b := binary.LittleEndian.AppendUint32(w.buf[:0], uint32(len(rel)))
	b = append(b, rel...)
	for _, v := range []uint64{uint64(st.Mode), uint64(st.Uid), uint64(st.Gid), uint64(st.Size), st.Dev, st.Ino,
		uint64(st.Mtim.Nano()), uint64(st.Ctim.Nano())} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	w.h.Write(b)
	w.buf = b
	w.newest = max(w.newest, st.Ctim.Nano())
}

// walk hashes the entries of the open folder fd (rel), in name order, and
// of the folders below it; it closes fd.
func (w *stampWalk) walk(fd int, rel string) error {
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	// In batches, so that a huge folder is refused without being read
	// whole.
	var names []string
	for {
		batch, err := f.Readdirnames(256)
		names = append(names, batch...)
		if w.n += len(batch); w.n > MaxEntries {
			return fmt.Errorf("%w: more than %d entries", ErrTooLarge, MaxEntries)
		}
		if errors.Is(err, io.EOF) || err == nil && len(batch) == 0 {
			break
		}
		if err != nil {
			return err
		}
	}
	slices.Sort(names)
	for _, name := range names {
		child := name
		if rel != "." {
			child = rel + "/" + name
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("%s: %w", child, err)
		}
		w.add(child, &st)
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("%s: %w", child, err)
		}
		// The folder hashed must be the one walked: a swap in between
		// would otherwise hash one folder's identity and another's
		// entries.
		var now unix.Stat_t
		if err := unix.Fstat(sub, &now); err != nil || now.Dev != st.Dev || now.Ino != st.Ino {
			unix.Close(sub)
			return fmt.Errorf("%s: changed while it was read", child)
		}
		if err := w.walk(sub, child); err != nil {
			return err
		}
	}
	return nil
}

// checkCacheDir refuses a verified-copy cache folder that is not a folder
// of the caller's that only the caller may write.
func checkCacheDir(dir string, st fs.FileInfo) error {
	s, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case !st.IsDir():
		return fmt.Errorf("%w: %s is not a folder (a symlink is refused)", ErrCacheUnsafe, dir)
	case !ok:
		return fmt.Errorf("%w: %s: no owner data", ErrCacheUnsafe, dir)
	case int(s.Uid) != os.Geteuid():
		return fmt.Errorf("%w: %s belongs to uid %d, not to the caller (uid %d)", ErrCacheUnsafe, dir, s.Uid, os.Geteuid())
	case st.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%w: %s is writable by its group or others (mode %o); chmod 700 it", ErrCacheUnsafe, dir, st.Mode().Perm())
	}
	return nil
}

// checkCacheParent refuses a folder above the cache that another user
// than root and the caller could rename entries of: owned by someone else,
// or writable by its group or others without the sticky bit (/tmp is
// fine: there only an entry's owner may rename it).
func checkCacheParent(dir string, st fs.FileInfo) error {
	s, ok := st.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return fmt.Errorf("%w: %s: no owner data", ErrCacheUnsafe, dir)
	case s.Uid != 0 && int(s.Uid) != os.Geteuid():
		return fmt.Errorf("%w: %s, above the cache, belongs to uid %d", ErrCacheUnsafe, dir, s.Uid)
	case st.Mode().Perm()&0o022 != 0 && st.Mode()&fs.ModeSticky == 0:
		return fmt.Errorf("%w: %s, above the cache, is writable by its group or others (mode %o)", ErrCacheUnsafe, dir, st.Mode().Perm())
	}
	return nil
}

// changedAt is the ctime of the entry st describes, which a rename sets.
func changedAt(st fs.FileInfo) time.Time {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return time.Unix(s.Ctim.Unix())
	}
	return st.ModTime()
}

// lockEntry takes a shared lock on the cached copy entry for as long as a
// run uses it, so that prune (tryLockEntry) never removes a copy in use;
// the returned function releases it. A copy that cannot be opened gets no
// lock: the intact check that follows fails on it anyway.
func lockEntry(entry string) func() {
	fd, err := unix.Open(entry, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return func() {}
	}
	for {
		err = unix.Flock(fd, unix.LOCK_SH)
		if err != unix.EINTR {
			break
		}
	}
	return func() { unix.Close(fd) }
}

// tryLockEntry takes the exclusive lock on entry without waiting; ok is
// false while a run uses the copy (lockEntry) or it cannot be opened.
func tryLockEntry(entry string) (unlock func(), ok bool) {
	fd, err := unix.Open(entry, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		return nil, false
	}
	return func() { unix.Close(fd) }, true
}
