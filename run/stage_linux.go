package run

import "github.com/skill-sandbox/skill-sandbox/run/internal/backend/gvisor"

// ExecInitIfRequested must come first in main and in TestMain of tests
// that use Run. On Linux the native backend's init process is a clone of
// the caller that never executes this program again (see
// run/internal/initproc), but a gVisor run with a host allowlist runs
// this program inside the sandbox as its network relay, which
// ExecInitIfRequested turns it into (it does not return then); on macOS
// the init process is this program re-executed. Calling it on every
// platform keeps a program portable.
func ExecInitIfRequested() { gvisor.ExecRelayIfRequested() }
