//go:build !linux && !darwin && !windows

package run

// ExecInitIfRequested does nothing on this platform: there is no init process.
func ExecInitIfRequested() {}
