//go:build !linux

package run

// forbidUserNamespacesIfAsked has nothing to forbid without Linux user
// namespaces.
func forbidUserNamespacesIfAsked() error { return nil }
