//go:build darwin

package reaper

import (
	"os"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// IsNamespaceInit is false: there are no PID namespaces here, so the init
// stage always execs the script itself.
func IsNamespaceInit() bool { return false }

// Run is never called here (see IsNamespaceInit).
func Run(*stageconfig.Config, Stage, *os.File, func() bool) int { return stageconfig.ExitFailure }
