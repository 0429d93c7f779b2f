// Package tempmode guards a test binary's temporary folder: for most
// uses, wrap m.Run in TestMain as os.Exit(tempmode.Guard(m.Run)).
//
// Tests running as root make folders reachable by the sandbox's identity
// with chmod; one that walks a parent too far changes /tmp itself, and
// every later test of another user fails there, far from the cause.
package tempmode

import (
	"fmt"
	"os"
)

// Guard runs run and returns its exit code, or 1 when the mode of
// os.TempDir() changed meanwhile, saying so on stderr.
func Guard(run func() int) int {
	dir := os.TempDir()
	before, err := os.Stat(dir)
	code := run()
	if err != nil {
		return code
	}
	if after, err := os.Stat(dir); err == nil && after.Mode() != before.Mode() {
		fmt.Fprintf(os.Stderr, "a test changed the mode of %s from %v to %v\n", dir, before.Mode(), after.Mode())
		os.Chmod(dir, before.Mode()) // for the next test binary
		return 1
	}
	return code
}
