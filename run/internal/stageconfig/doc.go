// Package stageconfig is the contract between the sandbox's processes, and
// the only thing they share: the config the supervisor sends the init stage
// (Config, Limits, the grant mounts and rules) and its wire encoding, the
// descriptor numbers they meet on, the init stage's layer report (Report,
// Layer, Missing) and the reaper's status report (ReaperReport).
//
// It runs in every process of a run (the supervisor encodes and parses, the
// init stage and the reaper decode and report) and touches nothing: no
// system call but a descriptor's fstat in SameGrant, no state. What a
// process does with the contract lives in its own package: run (the
// supervisor), run/internal/stage (the init stage), run/internal/reaper
// (PID 1 of the run's PID namespace).
package stageconfig
