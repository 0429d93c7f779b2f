// Package treestamp stamps folder trees and locks folders in use, for the
// caches that skip re-reading files they have checked before.
//
// For most uses, take a Tree stamp of a folder after checking its files
// and record it; a later Tree equal to the one recorded means nothing in
// the folder changed since (every change gives an entry a new ctime,
// which no unprivileged process can set back). Hold LockShared on a
// cached folder while it is in use, and remove one only under
// TryLockExclusive. Linux only: elsewhere Tree fails and the locks do
// nothing.
package treestamp

import "errors"

// ErrTooMany is returned (wrapped) by Tree for a tree of more entries
// than its bound.
var ErrTooMany = errors.New("too many entries to stamp")

// Stamp is a tree's stamp.
type Stamp struct {
	// Sum is the hex SHA-256 of every entry's path, type, mode, owner,
	// size, device, inode, mtime and ctime, in name order.
	Sum string
	// Newest is the newest ctime in the tree, in nanoseconds: a stamp is
	// worth recording only when it is older than the check by a margin
	// (a write in the same tick of a coarse clock would go unseen).
	Newest int64
}
