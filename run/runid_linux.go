package run

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"github.com/skill-sandbox/skill-sandbox/run/internal/proc"

	"golang.org/x/sys/unix"
)

// Per-user counters of the kernel that no namespace separates (epoll
// watches, RLIMIT_NPROC's process count, queued signals, message queue
// bytes) are charged to the host uid a run's processes have. Were every
// root caller's run host nobody, one run could take them all from every
// other run and from the host's own nobody processes; so each run of a
// root caller in the initial user namespace gets a host uid and gid of its
// own from the block of runid.go, held for the run's lifetime by an
// flock(2) on a file named after the id in runIDLockDir. Every supervisor
// on the host takes ids the same way, so two runs never share one; a
// supervisor that dies releases its locks with its descriptors.

// runIDLockBase and runIDLockDir hold the lock files; both must be
// root's, mode 0700, so that no other user can make or swap a lock.
const (
	runIDLockBase = "/run/skill-sandbox"
	runIDLockDir  = "ids"
)

// runIDTries bounds the random picks before takeRunID gives up: with
// 65536 ids, taken ones are met only when thousands of runs go at once.
const runIDTries = 64

// runID is a host uid and gid (the same number) held by a run: lock is
// the descriptor of the locked file, named path, which release removes and
// closes.
type runID struct {
	id   int
	lock int
	path string
}

// release gives the id back; nil-safe and idempotent. The file is removed
// while still locked, so that the folder holds only the ids in use: a
// take that locked it meanwhile finds its name gone or another file's
// (see lockID), and tries another id.
func (r *runID) release() {
	if r != nil && r.lock >= 0 {
		unix.Unlink(r.path)
		unix.Close(r.lock)
		r.lock = -1
	}
}

// ownRunIDs reports whether runs get an id of their own (takeRunID):
// when the caller is root in the initial user namespace. Elsewhere a root
// caller's runs stay nobody as mapped into its namespace (see
// nobodyUsable), and an unprivileged caller's are the caller.
func ownRunIDs() bool {
	if os.Geteuid() != 0 {
		return false
	}
	var st unix.Stat_t
	return unix.Stat("/proc/self/ns/user", &st) == nil && st.Ino == initialUserNSIno
}

// takeRunID takes a free id of the block, locked in base/runIDLockDir
// (made when missing), avoiding the ids the host's account files name.
func takeRunID(base string) (*runID, error) {
	dir, err := openLockDir(base)
	if err != nil {
		return nil, fmt.Errorf("run identity: %w", err)
	}
	defer unix.Close(dir)
	used := hostIDs()
	for range runIDTries {
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
			name := filepath.Join(base, runIDLockDir, strconv.Itoa(id))
			return &runID{id: id, lock: fd, path: name}, nil
		}
	}
	return nil, fmt.Errorf("run identity: no free id after %d tries in %d-%d", runIDTries, RunIDFirst, RunIDFirst+RunIDCount-1)
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

// openLockDir opens base/runIDLockDir, making either when missing, and
// refuses either unless it is a folder of root's with mode 0700: a lock
// file someone else could remove or make would let two runs share an id.
func openLockDir(base string) (int, error) {
	parent, err := openRootFolder(unix.AT_FDCWD, base, base)
	if err != nil {
		return -1, err
	}
	defer unix.Close(parent)
	return openRootFolder(parent, runIDLockDir, filepath.Join(base, runIDLockDir))
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

// idSet lists ids and ranges of ids.
type idSet []idRange

// has reports whether id is in s.
func (s idSet) has(id uint32) bool {
	_, ok := idMap(s).outside(id)
	return ok
}

// hostIDs lists the ids of the block that the host's account files name:
// users and groups, and the subordinate ranges of /etc/subuid and
// /etc/subgid that overlap it. Files that cannot be read add nothing.
func hostIDs() idSet {
	var s idSet
	for _, f := range []struct {
		path string
		sub  bool
	}{{"/etc/passwd", false}, {"/etc/group", false}, {"/etc/subuid", true}, {"/etc/subgid", true}} {
		b, err := proc.ReadFile(f.path, maxAccountFile)
		if err != nil {
			continue
		}
		s = append(s, parseIDLines(b, f.sub)...)
	}
	return s
}

// maxAccountFile bounds what hostIDs reads of an account file; past it
// the file adds nothing.
const maxAccountFile = 16 << 20

// parseIDLines returns the ids that a passwd or group file (sub false:
// the third field of each line) or an /etc/subuid or /etc/subgid file
// (sub true: name:first:count lines) names in the block, as ranges
// clipped to it; malformed lines are skipped.
func parseIDLines(b []byte, sub bool) idSet {
	var s idSet
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(strings.TrimSpace(line), ":")
		first, count := uint64(0), uint64(1)
		var err error
		switch {
		case sub && len(f) == 3:
			if first, err = strconv.ParseUint(f[1], 10, 32); err == nil {
				count, err = strconv.ParseUint(f[2], 10, 32)
			}
		case !sub && len(f) >= 4:
			first, err = strconv.ParseUint(f[2], 10, 32)
		default:
			continue
		}
		if err != nil {
			continue
		}
		lo, hi := max(first, RunIDFirst), min(first+count, RunIDFirst+RunIDCount)
		if lo < hi {
			s = append(s, idRange{inside: uint32(lo), count: uint32(hi - lo)})
		}
	}
	return s
}

// hostIdentity returns the host uid and gid s's run gets: an id of its
// own (see ownRunIDs), the one of a pooled stage it reserves when s has a
// pool whose stages have theirs, else the sandbox identity. A run with a
// write grant that is not id-mapped keeps the sandbox identity, nobody
// (see unmappedWrite).
func (s *Sandbox) hostIdentity() (hostIdentity, error) {
	uid, gid := sandboxIdentity()
	if s.sharedNobody || uid != nobodyUID || !ownRunIDs() || s.unmappedWrite() {
		return hostIdentity{uid: uid, gid: gid}, nil
	}
	if pi := s.Pool.reserve(s); pi != nil {
		if id := pi.id; id != nil {
			pi.id = nil
			return hostIdentity{uid: id.id, gid: id.id, own: id, stage: pi}, nil
		}
		s.Pool.discard(pi)
	}
	id, err := takeRunID(runIDLockBase)
	if err != nil {
		return hostIdentity{}, err
	}
	return hostIdentity{uid: id.id, gid: id.id, own: id}, nil
}

// unmappedWrite reports whether a write grant of s may be handed over
// without an id-mapping (see handOver): a folder of nobody's (made so by
// makeWriteFolder where no mapping can be had, or by an earlier version),
// a folder still to be made where none can be had (canMapWrite), or any
// write grant without a mount namespace. Such a folder is written as the
// sandbox identity itself, from one run to the next, so that identity must
// stay the same: nobody, shared with other such runs, as before runs had
// ids of their own. A wrong guess costs no access: the grant is checked
// again when it is handed over.
func (s *Sandbox) unmappedWrite() bool {
	if len(s.WritePaths) == 0 {
		return false
	}
	if slices.Contains(s.Disable, LayerMountNS) {
		return true
	}
	for _, p := range s.WritePaths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue // refused later
		}
		var st unix.Stat_t
		if unix.Stat(abs, &st) == nil {
			if st.Uid == nobodyUID {
				return true
			}
			continue
		}
		parent := filepath.Dir(abs) // the folder it is to be made in
		for unix.Stat(parent, &st) != nil && filepath.Dir(parent) != parent {
			parent = filepath.Dir(parent)
		}
		if !canMapWrite(parent, nobodyUID, nobodyUID) {
			return true
		}
	}
	return false
}
