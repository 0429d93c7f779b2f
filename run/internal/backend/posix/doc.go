// Package posix is the start of the Linux and macOS backend of run: the
// supervisor's hold on a run's processes once its init process is started.
//
// For most uses: Process is the supervisor's handle to the init process
// (signalled and reaped through a pidfd on Linux, an *os.Process on
// macOS), KillAll ends every process of a run (with a PID namespace by
// killing its PID 1; without one by sweeping the run's process group and
// session, or on macOS its process tree), Pipe makes the pipes between
// the supervisor and the init process, ReadStatusReport reads the init
// process's final report, and ExplainMissing and ExplainIncomplete add
// the host's real cause (sysctls, AppArmor, a container's masked /proc)
// to a layer the kernel refused. CloneFlag, UserNSRefused and
// EnableSubreaper serve the Linux clone; CountProcs the RLIMIT_NPROC of a
// run without a user namespace. For the script's streams, StdinFile and
// DirectStdin decide how the caller's stdin reaches it, ChownOutput
// gives it its output pipes, and WaitOutput drains them; ProxySocketPair
// carries the allowlist proxy's socket out of the run's network
// namespace; ScriptStatus checks a reaper report read late.
//
// It runs in the supervisor, with the caller's privileges. Nothing here
// forks or clones: run/internal/initproc clones the init process and
// run/internal/backend/native's start hands its pid to NewProcess; the
// launch (start, handshake, watch, collect) is native's, which calls
// what is here.
package posix
