// Package stageconfig is the contract between the sandbox's processes, and
// the only thing they share: the config the supervisor sends the init stage
// (Config, Limits, the grant mounts and rules) and its wire encoding, the
// descriptor numbers they meet on, the init stage's layer report (Report,
// Layer, Missing) and the reaper's status report (ReaperReport).
//
// It runs in the supervisor, which on Linux compiles the config into the
// init process's program (run/internal/initplan, run/internal/initproc)
// and reads its reports, and in macOS's init stage (run/internal/stage),
// which decodes the config itself. It touches nothing: no system call but
// a descriptor's fstat in SameGrant, no state.
package stageconfig
