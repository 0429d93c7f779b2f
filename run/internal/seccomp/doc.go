// Package seccomp builds and loads the sandbox's seccomp filter: the
// deny-list of kernel-attack system calls, the architecture check, and the
// rules a missing namespace calls for (Policy).
//
// It runs in the supervisor: run/internal/initplan puts the filter in the
// init process's program, which loads it (the init process is
// single-threaded, also while it reaps, so the one thread is the whole
// process). Nothing here keeps state or makes a system call, but
// EpollServer (seccomp_notify_linux.go): the supervisor's side of the
// filter's user notifications, which counts a run's epoll watches.
package seccomp
