// Package native is the native backend of run: it starts a run's init
// process on the host kernel (namespaces, cgroup, Landlock, seccomp on
// Linux; a Seatbelt profile on macOS; a Job Object on Windows, through
// run/internal/backend/winjob), hands it its config, watches the run and
// collects its end. It also drives the gVisor backend
// (run/internal/backend/gvisor), which shares its proxy, watch and
// output captures.
//
// For most uses, the planning (run/internal/plan) fills a backend.Spec,
// New returns the Launch of it, and Run (or RunGVisor, RunGVisorOrNative) starts the run
// and fills a backend.Outcome, which run copies into its Result. A Pool
// keeps Linux init processes started ahead (run.Pool is its public
// face).
//
// The start path, top to bottom (launch in launch_unix.go), each step in
// its own file:
//
//   - start (start_unix.go, cgroup_unix.go, initproc_linux.go,
//     pool_linux.go; exec_darwin.go on macOS): make the run's cgroup or
//     plan it late, then clone the init process into its namespaces with
//     its descriptors, or take a pooled one and hand it the run's;
//   - handshake (handshake_unix.go): send the program, read the layer
//     report, refuse or send the go-ahead, start the proxy
//     (proxy.go) and the epoll budget's server (epollbudget_linux.go);
//   - watch (watch_linux.go, run/internal/watch, backend.Watchdog): copy
//     the output, end the run on its time limit, a cancellation, too much
//     output or a cap the watch found;
//   - collect (run/internal/backend/posix): wait for the run's end, read
//     the reaper's report, hand the teardown to the background.
//
// The protocol between the supervisor and the init process (descriptors,
// bytes, reports) is drawn in run/internal/stageconfig's protocol.go.
//
// It runs in the supervisor, with the caller's privileges. The forks are
// run/internal/initproc's (Linux: a clone that runs no Go code, whose
// child is the init process, with the privileges of the user namespace
// it is cloned into) and exec_darwin.go's (macOS: this binary
// re-executed as the init process, as the caller or, for root, the
// sandbox identity).
package native
