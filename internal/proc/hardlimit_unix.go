//go:build linux || darwin

package proc

import (
	"syscall"
)

// WithinHardLimit returns v, or this process's hard limit for resource if
// that is lower: an unprivileged process cannot raise it, and a child it
// forks inherits the same hard limit.
func WithinHardLimit(resource int, v uint64) uint64 {
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(resource, &cur); err == nil && uint64(cur.Max) < v {
		return uint64(cur.Max)
	}
	return v
}
