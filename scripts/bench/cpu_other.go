//go:build !linux

package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"
)

const reapArg = "-internal-reap-cpu"

// fd3Arg opens a file as the command's fd 3 (see cpu_linux.go).
const fd3Arg = "-fd3"

// treeRun is what runTree measures (see cpu_linux.go).
type treeRun struct {
	cpu, returned, gone time.Duration
}

// runTree is not implemented here: it needs a child subreaper (Linux).
func runTree(argv []string) (treeRun, error) {
	return treeRun{}, errors.New("a process tree is only measured on Linux, not " + runtime.GOOS)
}

func reapMain(argv []string) int {
	fmt.Fprintln(os.Stderr, "bench: not supported on "+runtime.GOOS)
	return 1
}
