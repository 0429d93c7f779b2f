//go:build !linux

package identity

// RunID is a run's own host id; runs have none here.
type RunID struct{ ID int }

// Release does nothing here.
func (*RunID) Release() {}

// OwnRunIDs is false here: root callers' runs have no ids of their own.
func OwnRunIDs() bool { return false }
