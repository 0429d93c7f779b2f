// Package gvisor is the gVisor backend: it runs a run's script under
// runsc, gVisor's runtime, so that the script's system calls meet
// gVisor's user-space kernel (the Sentry) and not the host's.
//
// For most uses, run calls Find once, then Check and Run with the
// backend.Spec prepare made: Run writes an OCI bundle (config.json, from
// the package's own types of the OCI runtime specification) holding the
// same skill folder, grants, masks, work folder, environment, working
// directory and limits as the native backend's, starts `runsc run`,
// ends it with a backend.Watchdog (time, cancellation, output) by `runsc
// kill` and `runsc delete --force`, and returns the script's exit status.
// The network is gVisor's own stack with a loopback only; with a host
// allowlist Run hands the caller a Unix listener to serve the filtering
// proxy on, and this program, started in the sandbox as its first
// process (ExecRelayIfRequested), relays the sandbox's proxy port to it;
// with AllowNetwork the sandbox has the host's network. What the backend
// lacks is in docs/backends.md; Check refuses those runs. Prestart starts
// a sandbox ahead of one later run of a given shape (Key), whose first
// process, this program again, waits for the run's arguments; run.Pool
// keeps such sandboxes for long-lived servers.
//
// It runs in the supervisor: it starts runsc, whose own processes (the
// Sentry and the gofer) hold the script; the state folder and the bundle
// are a temporary folder of the supervisor's, removed after the run.
package gvisor

// Name is the backend's name in run.Sandbox.Backend and the record.
const Name = "gvisor"
