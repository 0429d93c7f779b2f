// Package cgroup is the per-run cgroup: it holds the whole process tree of
// one run (the init process, the script and everything it starts) under
// one memory, process-count and optionally CPU limit. RLIMIT_AS and
// RLIMIT_NPROC are per process or per user: 128 processes of 450 MiB each,
// or memory held in memfds and tmpfs files, fit under them. The cgroup
// counts all of it.
//
// For most uses: Open makes a run's cgroup (named by Name, limited by
// Limits), StartInside starts the init process inside it, or Attach moves
// it there, Stats reads the run's peak memory and OOM kills, and Close
// kills what is left and removes it. PlanLate and MakeLate are the
// variant in which the init process joins its cgroup v1 cgroups itself,
// after the clone (see late_linux.go).
//
// Where the cgroup comes from, in order:
//
//   - cgroup v2: a new child of the caller's own cgroup when that cgroup
//     already hands the memory and pids controllers to its children, else a
//     sibling in its parent (the caller's cgroup holds processes, so the
//     no-internal-process rule keeps it from enabling them). That is what a
//     delegated subtree gives an ordinary user under systemd (user@.service
//     and its app.slice), and what root gets almost anywhere. Nothing is
//     enabled or changed in a cgroup this package did not create.
//   - cgroup v1 (as root, or where the hierarchies are writable): a child
//     of the caller's cgroup in the memory and pids hierarchies (and cpu,
//     when a CPU limit is asked for). Where the memory controller is a v1
//     one and the hierarchies are mounted the usual way (usualV1Mounts),
//     v1 is tried first, without reading mountinfo: v2 could not have the
//     memory controller then.
//
// Where neither works Open says why, and the run goes on without the
// layer: the cgroup guards the machine's resources, not the host's data,
// and RLIMIT_AS and RLIMIT_NPROC still hold each process.
//
// It runs in the supervisor. The init process's side of a late join (its
// write to each "tasks" file) is compiled by run/internal/initplan.
// Cgroups are a Linux feature: elsewhere Open fails and the rest does
// nothing.
package cgroup
