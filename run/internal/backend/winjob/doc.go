// Package winjob is the Windows backend: a run's script in a Job Object.
//
// For most uses, run calls Launch with the backend.Spec its prepare made
// and copies the backend.Outcome into its Result. There is no init
// process: the supervisor creates a Job Object with the run's limits
// (jobLimitsOf), starts the script suspended, puts it in the job before
// it runs an instruction and resumes it; the time limit, a cancellation,
// too much output and the script's own exit terminate the whole job.
// The layers are the job and the AppContainer, which is always missing
// (windowsLayers). The Windows calls themselves are run/internal/winproc's.
//
// It runs in the supervisor. Only the layers and limits are built on
// every platform, for their tests; Launch is Windows'.
package winjob
