package artifacts

import (
	"io/fs"
	"time"
)

// fileState is what a snapshot remembers of one entry. The change time
// decides: a script can reset mtime and atime (utimensat) and keep size,
// mode and inode, but not ctime, which the kernel sets to its clock on
// every write, truncation, chmod, chown, xattr change, link, unlink and
// rename, and which only a change of the system clock could set back.
type fileState struct {
	size  int64
	mtime int64 // Unix nanoseconds
	ctime int64 // Unix nanoseconds; 0 where the platform has none
	ino   uint64
	mode  fs.FileMode
}

// Snapshot maps the paths under a run's roots to their state (folders
// apart, for the sweep's permission check), as Take found them.
type Snapshot struct {
	files   map[string]fileState
	folders map[string]fileState
	// truncated is set when the walk stopped at MaxEntries or
	// maxPathBytes.
	truncated bool
	// newest is the latest ctime of a non-folder entry seen (see
	// Settle).
	newest int64
}

// maxSettle bounds how long Settle waits: a few clock ticks (HZ=100 makes
// them 10 ms). A ctime further ahead comes from a clock set back.
const maxSettle = 50 * time.Millisecond

// Settle returns once the clock the kernel stamps ctimes with has passed
// every ctime in s, so that any change made afterwards gets a ctime that
// differs from the one s holds: without it a file changed just before
// the snapshot and again by the script within the same clock tick (4 ms
// at HZ=250, on a kernel without fine-grained timestamps) would keep its
// ctime. It rarely waits at all: only when a file changed in the last
// tick.
func (s *Snapshot) Settle() {
	now := fileClock()
	if s.newest < now || s.newest-now > int64(maxSettle) {
		return
	}
	deadline := time.Now().Add(maxSettle)
	for fileClock() <= s.newest && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// Take records every entry under roots, without following symlinks
// (walkEntries). A folder that cannot be read ends the walk of its root
// and marks the snapshot truncated, as do more than MaxEntries entries
// or maxPathBytes of path text.
func Take(roots []string) *Snapshot {
	snap := &Snapshot{files: map[string]fileState{}, folders: map[string]fileState{}}
	n, pathBytes := 0, 0
	for _, root := range roots {
		err := walkEntries(root, func(p string, st fileState, folder bool) bool {
			if n++; n > MaxEntries {
				snap.truncated = true
				return false
			}
			if pathBytes += len(p); pathBytes > maxPathBytes {
				snap.truncated = true
				return false
			}
			if folder {
				snap.folders[p] = st
				return true
			}
			snap.files[p] = st
			snap.newest = max(snap.newest, st.ctime)
			return true
		})
		if err != nil {
			snap.truncated = true
		}
	}
	return snap
}
