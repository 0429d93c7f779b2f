// Package initproc is the sandbox's init process on Linux: the child the
// supervisor clones into the run's namespaces, which builds the layers and
// then executes the script, or stays PID 1 of the run's PID namespace to
// reap it.
//
// It is not a second program. The supervisor forks itself with clone(2)
// and the child never starts a Go runtime of its own: it starts on a
// stack in a private mapping made for it (the arena, see cloneChild),
// without the supervisor's anonymous memory (which the fork leaves empty,
// see wipeWindow), drops every other mapping it can (see Start), and runs a
// program of system calls that the supervisor compiled for the run (the
// Program, built with a Builder by run/internal/initplan) and sent over
// descriptor 3. So the start costs what bubblewrap's does: the clone, the
// system calls of the layers and the script's execve, and none of a Go
// runtime's start-up or of decoding a config.
//
// The code that runs in the child (the files named child*.go) is ordinary
// Go with strict rules, since the child has no Go runtime behind it: no
// allocation, no pointer stored outside the stack (which would need a
// write barrier), no map, interface, defer, panic or goroutine, no call
// outside this package but the raw system call wrappers of package
// syscall. TestChildCallsNoRuntime disassembles those functions to check
// it. The stack checks the compiler puts at the start of each function
// read a g whose bounds are the arena's stack (see cloneChild), so they
// pass without the runtime.
//
// The program is a list of operations (Op): system calls whose arguments
// are constants, addresses in the program's data, or registers holding
// earlier results (descriptors), and a few compound steps (a Landlock
// rule on a path, the report, the reaping). Each operation names the
// isolation layers it builds; when one fails the child records which, and
// either goes on without that layer (the kernel does not offer it) or
// refuses the run (the layer was built part-way). The supervisor turns the
// child's binary report (Report) into the layers applied and missing,
// with a message per failure from the description it kept for each
// operation.
//
// An init process is named (comm, as ps shows it) "ss-" and the first
// twelve characters of its run's request id, or "ss-pooled" while it waits
// in a pool for a run; its argv and environment are gone with the memory
// it dropped.
//
// Code here runs in two processes: Start, the Builder and Verify in
// the supervisor; everything in child*.go in the init process, where it
// may touch only what that process holds (its namespaces, credentials,
// limits and filters, and the descriptors Start placed).
//
// README.md in this folder explains the runtime-less code in full: why,
// what it may call, how it starts, and how to add a step safely.
package initproc
