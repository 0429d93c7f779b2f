// Package reaper is PID 1 of a run's PID namespace: once the init stage
// (run/internal/stage) has applied every layer, Run starts the script as
// its child, sets its RLIMIT_AS and RLIMIT_NPROC while it is stopped after
// execve, lets it go on the supervisor's go-ahead, reaps every process of
// the namespace, and sends the script's wait status and the run's usage
// on descriptor 5 (stageconfig.ReaperReport).
//
// Code here runs in that PID 1 only, after the init stage's layers are in
// force on its thread. It may touch the processes of its own namespace
// (wait, ptrace of its child, prlimit, kill), its own signal dispositions,
// dumpability and oom_score_adj, and the config and status descriptors;
// nothing of the host.
package reaper
