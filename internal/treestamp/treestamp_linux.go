package treestamp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// Tree returns the stamp of the folder dir and everything below it, dir
// itself included, up to maxEntries entries (else ErrTooMany). It
// goes by descriptors (fstatat(2) beside each open folder, no path looked
// up twice): a walk of a 3,000-file skill is most of what a cached run
// costs.
func Tree(dir string, maxEntries int) (Stamp, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Stamp{}, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	w := stampWalk{h: sha256.New(), max: maxEntries}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return Stamp{}, err
	}
	w.add(".", &st)
	if err := w.walk(fd, "."); err != nil {
		return Stamp{}, fmt.Errorf("%s: %w", dir, err)
	}
	return Stamp{Sum: hex.EncodeToString(w.h.Sum(nil)), Newest: w.newest}, nil
}

// stampWalk is one treeStamp.
type stampWalk struct {
	h      hash.Hash
	newest int64
	n, max int
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
		if w.n += len(batch); w.n > w.max {
			return fmt.Errorf("%w: more than %d", ErrTooMany, w.max)
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

// LockShared takes a shared lock (flock(2)) on the folder dir, waiting
// for an exclusive one, and returns the function that releases it. A
// folder that cannot be opened gets no lock: the check of its files that
// follows fails anyway.
func LockShared(dir string) func() {
	// The folder may be renamed aside (evicted) and another made at dir
	// while this waits: the lock must be on the one at dir when it is
	// taken, which the caller then checks and uses. A replacement each
	// time, 100 times over, leaves the last one locked.
	for try := 0; ; try++ {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return func() {}
		}
		for {
			err = unix.Flock(fd, unix.LOCK_SH)
			if err != unix.EINTR {
				break
			}
		}
		if atPath(fd, dir) || try == 100 {
			return func() { unix.Close(fd) }
		}
		unix.Close(fd)
	}
}

// atPath reports whether the folder open at fd is the one at dir now.
func atPath(fd int, dir string) bool {
	var held, now unix.Stat_t
	if unix.Fstat(fd, &held) != nil || unix.Lstat(dir, &now) != nil {
		return false
	}
	return held.Dev == now.Dev && held.Ino == now.Ino
}

// TryLockExclusive takes the exclusive lock on the folder dir without
// waiting; ok is false while a shared lock is held (LockShared) or it
// cannot be opened.
func TryLockExclusive(dir string) (unlock func(), ok bool) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	// A folder no longer at dir once locked is not the one to remove.
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil || !atPath(fd, dir) {
		unix.Close(fd)
		return nil, false
	}
	return func() { unix.Close(fd) }, true
}
