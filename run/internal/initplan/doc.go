// Package initplan compiles the supervisor's decisions for a run
// (stageconfig.Config) into the program the init process runs
// (run/internal/initproc): the layers in the order of docs/security.md,
// each as the system calls that build it, and the failure messages and
// the missing-or-refused rule of every step.
//
// Everything here runs in the supervisor, before or while the init
// process waits for its program. It reads the host (the system folders
// and /etc it will show, the kernel's Landlock version) but changes
// nothing; every change is the init process's, inside its namespaces.
// Paths the init process opens again are checked there (device and inode,
// no symlink on the way) wherever a swap since these reads could matter.
package initplan
