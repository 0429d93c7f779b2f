package identity

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/skill-sandbox/skill-sandbox/internal/random"

	"golang.org/x/sys/unix"
)

// Per-user counters of the kernel that no namespace separates (epoll
// watches, RLIMIT_NPROC's process count, queued signals, message queue
// bytes) are charged to the host uid a run's processes have. Were every
// root caller's run host nobody, one run could take them all from every
// other run and from the host's own nobody processes; so each run of a
// root caller in the initial user namespace gets a host uid and gid of its
// own from the block of runid.go, held for the run's lifetime by an
// flock(2) on a file named after the id in lockDir. Every supervisor on
// the host takes ids the same way, so two runs never share one; a
// supervisor that dies releases its locks with its descriptors.

// LockBase is the folder Take is given outside tests; it and its lockDir
// must be root's, mode 0700, so that no other user can make or swap a
// lock.
const LockBase = "/run/skill-sandbox"

// lockDir is the folder of LockBase that holds the lock files.
const lockDir = "ids"

// takeTries bounds the random picks before Take gives up: with 65536
// ids, taken ones are met only when thousands of runs go at once.
const takeTries = 64

// RunID is a host uid and gid (the same number, ID) held by a run: lock
// is the descriptor of the locked file, named path, which Release
// removes and closes.
type RunID struct {
	ID   int
	lock int
	path string
}

// Release gives the id back; nil-safe and idempotent. The file is
// removed while still locked, so that the folder holds only the ids in
// use: a take that locked it meanwhile finds its name gone or another
// file's (see lockID), and tries another id.
func (r *RunID) Release() {
	if r != nil && r.lock >= 0 {
		unix.Unlink(r.path)
		unix.Close(r.lock)
		r.lock = -1
	}
}

// OwnRunIDs reports whether runs get an id of their own (Take): when the
// caller is root in the initial user namespace. Elsewhere a root
// caller's runs stay nobody as mapped into its namespace (see
// nobodyUsable), and an unprivileged caller's are the caller.
func OwnRunIDs() bool {
	return os.Geteuid() == 0 && inInitialUserNS()
}

// Take takes a free id of the block, locked in base/lockDir (made when
// missing), avoiding the ids the host's account files name.
func Take(base string) (*RunID, error) {
	dir, err := openLockDir(base)
	if err != nil {
		return nil, fmt.Errorf("run identity: %w", err)
	}
	defer unix.Close(dir)
	used := hostIDs()
	for range takeTries {
		var b [4]byte
		if err := random.Read(b[:]); err != nil {
			return nil, fmt.Errorf("run identity: %w", err)
		}
		id := RunIDFirst + int(binary.LittleEndian.Uint32(b[:])%RunIDCount)
		if used.has(uint32(id)) {
			continue
		}
		fd, err := lockID(dir, strconv.Itoa(id))
		if err != nil {
			return nil, fmt.Errorf("run identity: lock %d: %w", id, err)
		}
		if fd >= 0 {
			name := filepath.Join(base, lockDir, strconv.Itoa(id))
			return &RunID{ID: id, lock: fd, path: name}, nil
		}
	}
	return nil, fmt.Errorf("run identity: no free id after %d tries in %d-%d", takeTries, RunIDFirst, RunIDFirst+RunIDCount-1)
}

// lockID opens and locks the lock file name in dir, made when missing: a
// descriptor holding the lock, or -1 when another run holds it or released
// it meanwhile (its file is no longer the one of that name).
func lockID(dir int, name string) (int, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return -1, err
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return -1, nil
		}
		return -1, err
	}
	var held, named unix.Stat_t
	if unix.Fstat(fd, &held) != nil || unix.Fstatat(dir, name, &named, unix.AT_SYMLINK_NOFOLLOW) != nil ||
		held.Dev != named.Dev || held.Ino != named.Ino {
		unix.Close(fd)
		return -1, nil
	}
	return fd, nil
}

// openLockDir opens base/lockDir, making either when missing, and
// refuses either unless it is a folder of root's with mode 0700: a lock
// file someone else could remove or make would let two runs share an id.
func openLockDir(base string) (int, error) {
	parent, err := openRootFolder(unix.AT_FDCWD, base, base)
	if err != nil {
		return -1, err
	}
	defer unix.Close(parent)
	return openRootFolder(parent, lockDir, filepath.Join(base, lockDir))
}

// openRootFolder opens the folder name (relative to dir; shown as path)
// without following a symlink, making it 0700 when missing, and checks it
// is root's with no rights for group or others.
func openRootFolder(dir int, name, path string) (int, error) {
	const why = " (each run of a root caller locks a host uid of its own there: see docs/run.md)"
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dir, name, flags, 0)
	if errors.Is(err, unix.ENOENT) {
		if err := unix.Mkdirat(dir, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, fmt.Errorf("%s: %w%s", path, err, why)
		}
		fd, err = unix.Openat(dir, name, flags, 0)
	}
	if err != nil {
		return -1, fmt.Errorf("%s: %w%s", path, err, why)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("%s: %w%s", path, err, why)
	}
	if st.Uid != 0 || st.Mode&0o7777 != 0o700 {
		unix.Close(fd)
		return -1, fmt.Errorf("%s is owned by uid %d with mode %#o, want root's with mode 0700: refused, since whoever made it could let two runs share a host uid%s", path, st.Uid, st.Mode&0o7777, why)
	}
	return fd, nil
}
