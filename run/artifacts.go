package run

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"sort"
	"time"
)

// Actions of an Artifact.
const (
	ArtifactCreated  = "created"
	ArtifactModified = "modified"
	ArtifactDeleted  = "deleted"
)

// Bounds of the artifact list of one run.
const (
	// MaxArtifacts is how many changed files are listed.
	MaxArtifacts = 1000
	// MaxArtifactBytes is how many bytes are hashed in total; files beyond
	// it are listed without a hash.
	MaxArtifactBytes = 256 << 20
	// maxSnapshotEntries bounds the entries walked per snapshot.
	maxSnapshotEntries = 100000
	// maxSnapshotPathBytes bounds the path text a snapshot keeps: paths
	// run up to PATH_MAX, and 100,000 of them (a script's few seconds of
	// work in a write grant) held 400 MB in the supervisor per snapshot.
	maxSnapshotPathBytes = 32 << 20
)

// Artifact is one file the script created, changed or deleted.
type Artifact struct {
	Path   string // absolute host path
	Size   int64  // size after the run (before it, when deleted)
	SHA256 string // hex SHA-256 of the content after the run; "" when deleted, not a regular file or beyond the hashing budget
	Action string // ArtifactCreated, ArtifactModified or ArtifactDeleted
	Type   string // "file", "symlink" or "other"
}

// Actions of a Neutralised entry.
const (
	NeutralisedRemoved     = "removed"
	NeutralisedQuarantined = "quarantined"
	NeutralisedFailed      = "failed" // left in place: it changed under us
)

// Neutralised is an entry a run left in a write grant that was removed or
// renamed aside before Run returned (docs/grants.md, "Outputs that lead
// elsewhere"): a symlink leading out of the grant, a FIFO, socket or
// device node, or a file the caller's tools run on their own.
type Neutralised struct {
	Path   string // absolute host path where the run left it
	Kind   string // "symlink", "fifo", "socket", "device" or "autorun"
	Target string // a symlink's target; for "autorun", the path it was renamed to
	Action string // NeutralisedRemoved, NeutralisedQuarantined or NeutralisedFailed
}

// Artifacts is the bounded list of what a run changed on the host.
type Artifacts struct {
	// Neutralised lists what the run left that was removed or renamed
	// aside before Run returned (at most MaxArtifacts; Truncated is set
	// past it).
	Neutralised []Neutralised
	Files       []Artifact
	Count       int   // changes found, including any left out of Files
	BytesHashed int64 // bytes read to compute the hashes
	// Truncated is set when a bound was reached: more than MaxArtifacts
	// changes, MaxArtifactBytes hashed, or a folder too large to walk.
	Truncated bool
}

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

// snapshot maps paths to their state (folders apart, for the sweep's
// permission check); truncated is set when the walk stopped at
// maxSnapshotEntries or maxSnapshotPathBytes. newest is the latest ctime
// of a non-folder entry seen (see settle).
type snapshot struct {
	files     map[string]fileState
	folders   map[string]fileState
	truncated bool
	newest    int64
}

// maxSettle bounds how long settle waits: a few clock ticks (HZ=100 makes
// them 10 ms). A ctime further ahead comes from a clock set back.
const maxSettle = 50 * time.Millisecond

// settle returns once the clock the kernel stamps ctimes with has passed
// every ctime in s, so that any change made afterwards gets a ctime that
// differs from the one s holds: without it a file changed just before
// the snapshot and again by the script within the same clock tick (4 ms
// at HZ=250, on a kernel without fine-grained timestamps) would keep its
// ctime. It rarely waits at all: only when a file changed in the last
// tick.
func (s *snapshot) settle() {
	now := fileClock()
	if s.newest < now || s.newest-now > int64(maxSettle) {
		return
	}
	deadline := time.Now().Add(maxSettle)
	for fileClock() <= s.newest && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// takeSnapshot records every entry under roots, without
// following symlinks (walkEntries). A folder that cannot be read ends the
// walk of its root and marks the snapshot truncated.
func takeSnapshot(roots []string) *snapshot {
	snap := &snapshot{files: map[string]fileState{}, folders: map[string]fileState{}}
	n, pathBytes := 0, 0
	for _, root := range roots {
		err := walkEntries(root, func(p string, st fileState, folder bool) bool {
			if n++; n > maxSnapshotEntries {
				snap.truncated = true
				return false
			}
			if pathBytes += len(p); pathBytes > maxSnapshotPathBytes {
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

// diffSnapshots lists what changed between before and after, hashing
// created and modified regular files within the bounds.
func diffSnapshots(before, after *snapshot) Artifacts {
	var a Artifacts
	a.Truncated = before.truncated || after.truncated
	var paths []string
	for p, st := range after.files {
		if old, ok := before.files[p]; !ok || old != st {
			paths = append(paths, p)
		}
	}
	for p := range before.files {
		if _, ok := after.files[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	a.Count = len(paths)
	if len(paths) > MaxArtifacts {
		paths, a.Truncated = paths[:MaxArtifacts], true
	}
	for _, p := range paths {
		st, ok := after.files[p]
		art := Artifact{Path: p}
		switch {
		case !ok:
			st = before.files[p]
			art.Action = ArtifactDeleted
		case hasPath(before, p):
			art.Action = ArtifactModified
		default:
			art.Action = ArtifactCreated
		}
		art.Size = st.size
		art.Type = fileType(st.mode)
		if ok && st.mode.IsRegular() {
			if a.BytesHashed+st.size > MaxArtifactBytes {
				a.Truncated = true
			} else if sum, n, err := hashFile(p, st); err == nil {
				art.SHA256 = sum
				a.BytesHashed += n
			}
		}
		a.Files = append(a.Files, art)
	}
	return a
}

func hasPath(s *snapshot, p string) bool {
	_, ok := s.files[p]
	return ok
}

func fileType(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

// errChanged means the file is not the one the snapshot saw.
var errChanged = errors.New("file changed since the snapshot")

// hashFile hashes the regular file at p without following a symlink
// anywhere on its path or blocking on a FIFO planted in its place
// (openNoFollow), and only if it is still the inode the snapshot saw; it
// reads at most st.size bytes.
func hashFile(p string, st fileState) (string, int64, error) {
	f, err := openNoFollow(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	if !info.Mode().IsRegular() || inodeOf(info) != st.ino {
		return "", 0, errChanged
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, st.size))
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
