// Package stage is the sandbox's init stage: the process the supervisor
// re-executes as argv[0] "skill-sandbox-init" inside the new namespaces
// (see ExecIfRequested). It reads the config (stageconfig) from descriptor
// 3, applies the layers in order (mounts, root and /etc, the network
// namespace's loopback, rlimits, capabilities, no_new_privs, Landlock,
// seccomp), reports them on descriptor 4 and executes the script; under a
// PID namespace it hands over to the reaper (run/internal/reaper) instead
// and stays PID 1.
//
// Code here runs in the init stage only, on its one locked thread, and may
// touch what that process holds: its namespaces (mount, UTS, network), its
// own credentials, limits and filters, and the descriptors the supervisor
// passed (config, report, grants, the proxy socket). It never reaches the
// supervisor but through those descriptors, and shares only stageconfig,
// seccomp and proc with the other processes.
package stage
