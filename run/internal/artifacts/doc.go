// Package artifacts is what the supervisor makes of a run's write grants
// and kept work folder once the run is over: the list of files the run
// created, changed or deleted there, and the sweep that neutralises what
// the run left there that could lead the caller's tools out of the grant,
// block them, or run code on the caller's side.
//
// For most uses: Take records the roots before the run and Settle waits
// until a change made afterwards gets a ctime of its own; after the run,
// Sweep neutralises links leading out, FIFOs, sockets, device nodes,
// auto-run files, planted git folders and others' write permission the
// run gave (Linux only), and Diff compares the snapshot with a second
// Take, hashing what changed within MaxFiles and MaxBytes. The caller
// (run) turns the List and Neutralised entries into its Result.
//
// Both walks go by descriptors, never through a symlink (run/internal/
// walk), because another run sharing a write grant may still be
// changing it. GitDirAt and GitDirPath are the sweep's test of a git
// folder's shape, which run's grant planning shares.
//
// It runs in the supervisor, after every process of the run is gone
// (Take and Settle before the run starts). The descriptor walk is Linux
// and macOS only; elsewhere the snapshot walks by path and Sweep does
// nothing.
package artifacts
