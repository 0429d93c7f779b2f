//go:build linux && !amd64 && !arm64

package initproc

import "errors"

// ErrUnsupported says that this architecture has no init process: its
// entry (cloneChild) is written for amd64 and arm64 only.
var ErrUnsupported = errors.New("the sandbox's init process is not implemented for this architecture (amd64 and arm64 are)")

// UserNS has no init process to take a namespace from.
func UserNS(int, int) (int, error) { return -1, ErrUnsupported }
