//go:build !linux

package identity

// UnmappedOwner is -1 here: there are no user namespaces.
func UnmappedOwner() int { return -1 }
