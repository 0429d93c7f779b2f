//go:build !linux && !darwin

package artifacts

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// walkEntries calls visit for root and every entry under it, without
// following symlinks, until visit returns false. Here the walk goes by
// path (filepath.WalkDir), and folders that cannot be read are skipped.
func walkEntries(root string, visit func(p string, st fileState, folder bool) bool) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if !visit(p, fileState{size: info.Size(), mtime: info.ModTime().UnixNano(), mode: info.Mode()}, d.IsDir()) {
			return filepath.SkipAll
		}
		return nil
	})
}

// openNoFollow opens p for reading.
func openNoFollow(p string) (*os.File, error) { return os.Open(p) }

// inodeOf has no inode to report here.
func inodeOf(fs.FileInfo) uint64 { return 0 }

// fileClock is the time in Unix nanoseconds; nothing here records a
// ctime to settle past.
func fileClock() int64 { return time.Now().UnixNano() }
