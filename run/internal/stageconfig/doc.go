// Package stageconfig is the contract between the sandbox's processes, and
// the only thing they share: the config the supervisor sends the init
// process (Config, Limits, the grant mounts and rules) and its wire
// encoding, the descriptor numbers and bytes they meet on (drawn, with
// every message in order, in the doc comment of ConfigFD, in
// protocol.go), the init process's layer report (Report, Layer, Missing)
// and its final status report once it has reaped the run (ReaperReport).
//
// It runs in the supervisor, which on Linux compiles the config into the
// init process's program (run/internal/initplan, run/internal/initproc)
// and reads its reports, and in macOS's init process (run/internal/stage),
// which decodes the config itself. It touches nothing: no system call but
// a descriptor's fstat in SameGrant, no state.
package stageconfig
