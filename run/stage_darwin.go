package run

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/stage"
)

// ExecInitIfRequested turns this process into the sandbox's init process when
// it was started as one by Run: argv[0] is "skill-sandbox-init" and a pipe
// is open on descriptor 3. It then sets the limits and executes the
// script under its Seatbelt profile, and never returns. In every other
// case it returns at once, after a string comparison. Call it first thing
// in main, and in TestMain of tests that use Run: on macOS the init process
// is this program re-executed.
func ExecInitIfRequested() { stage.ExecIfRequested() }
