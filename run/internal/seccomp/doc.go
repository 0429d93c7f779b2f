// Package seccomp builds and loads the sandbox's seccomp filter: the
// deny-list of kernel-attack system calls, the architecture check, and the
// rules a missing namespace calls for (Policy).
//
// The init stage (run/internal/stage) loads it on its own thread before it
// executes the script; the reaper (run/internal/reaper) puts it on the Go
// runtime's other threads (SyncThreads). Nothing here keeps state; Load touches
// only the calling process's filters and no_new_privs is the caller's.
package seccomp
