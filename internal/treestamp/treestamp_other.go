//go:build !linux

package treestamp

import "fmt"

// Tree fails on this platform: without inode and ctime an unchanged file
// cannot be told from a changed one.
func Tree(dir string, maxEntries int) (Stamp, error) {
	return Stamp{}, fmt.Errorf("%s: no stamp on this platform", dir)
}

// LockShared does nothing on this platform (there is no cache to prune:
// see Tree).
func LockShared(string) func() { return func() {} }

// TryLockExclusive never locks on this platform (see Tree).
func TryLockExclusive(string) (func(), bool) { return nil, false }
