//go:build linux || darwin

package run

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/stage"
)

// ExecInitIfRequested turns this process into the sandbox's init stage when
// it was started as one by Run: argv[0] is "skill-sandbox-init" and a pipe
// is open on descriptor 3. It then applies the isolation layers and execs
// the script (under a PID namespace: starts the script as its child and
// stays PID 1 to reap), and never returns. In every other case it returns
// at once, after a string comparison. Call it first thing in main, and in TestMain
// of tests that use Run.
func ExecInitIfRequested() { stage.ExecIfRequested() }
