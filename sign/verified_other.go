//go:build !linux

package sign

import (
	"fmt"
	"io/fs"
	"time"
)

// treeStamp fails on this platform: without inode and ctime an unchanged
// file cannot be told from a changed one.
func treeStamp(dir string) (stamp, error) {
	return stamp{}, fmt.Errorf("%s: no stamp on this platform", dir)
}

// checkCacheDir refuses every cache folder on this platform (see treeStamp).
func checkCacheDir(dir string, _ fs.FileInfo) error {
	return fmt.Errorf("%w: %s: verified copies are not cached on this platform", ErrCacheUnsafe, dir)
}

// checkCacheParent refuses every folder on this platform (see treeStamp).
func checkCacheParent(dir string, st fs.FileInfo) error { return checkCacheDir(dir, st) }

// changedAt is the mtime of the entry st describes.
func changedAt(st fs.FileInfo) time.Time { return st.ModTime() }

// lockEntry is never reached on this platform (no cache; see treeStamp).
func lockEntry(string) func() { return func() {} }

// tryLockEntry is never reached on this platform (no cache; see treeStamp).
func tryLockEntry(string) (func(), bool) { return nil, false }
