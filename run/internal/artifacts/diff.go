package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"sort"
)

// Diff lists what changed between the snapshots before and after,
// hashing created and modified regular files within MaxFiles and
// MaxBytes.
func Diff(before, after *Snapshot) List {
	var a List
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
	if len(paths) > MaxFiles {
		paths, a.Truncated = paths[:MaxFiles], true
	}
	for _, p := range paths {
		st, ok := after.files[p]
		art := File{Path: p}
		switch {
		case !ok:
			st = before.files[p]
			art.Action = Deleted
		case hasPath(before, p):
			art.Action = Modified
		default:
			art.Action = Created
		}
		art.Size = st.size
		art.Type = fileType(st.mode)
		if ok && st.mode.IsRegular() {
			if a.BytesHashed+st.size > MaxBytes {
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

func hasPath(s *Snapshot, p string) bool {
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
