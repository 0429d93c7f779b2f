//go:build darwin

package run

import (
	"os"
)

// isNamespaceInit is false: there are no PID namespaces here, so the init
// stage always execs the script itself.
func isNamespaceInit() bool { return false }

// spawnAndReap is never called here (see isNamespaceInit).
func spawnAndReap(*initConfig, *os.File, func() bool) int { return initExitFailure }
