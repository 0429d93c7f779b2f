// Package stage is the sandbox's init process on macOS: the process the
// supervisor re-executes as argv[0] "skill-sandbox-init" (see
// ExecIfRequested). It reads the config (stageconfig) from descriptor 3,
// sets the resource limits, checks that the Seatbelt profile applies,
// reports the layers on descriptor 4 and executes the script through
// sandbox-exec. (On Linux the init process is run/internal/initproc, a
// clone of the supervisor that runs a compiled program instead of a second
// Go program.)
//
// Code here runs in the init process only, on its one locked thread, and may
// touch what that process holds: its own limits and the descriptors the
// supervisor passed. It never reaches the supervisor but through those
// descriptors, and shares only stageconfig and proc with the other
// processes.
package stage
