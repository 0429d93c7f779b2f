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
