//go:build !linux

package run

// forbidUserNamespacesIfAsked has nothing to forbid without Linux user
// namespaces.
func forbidUserNamespacesIfAsked() error { return nil }

// degradedRerun is false: there is no re-run without user namespaces here.
func degradedRerun() bool { return false }
