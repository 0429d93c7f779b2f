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

// treeCPU is not implemented here: it needs a child subreaper (Linux).
func treeCPU(argv []string) (time.Duration, error) {
	return 0, errors.New("CPU of a process tree is only measured on Linux, not " + runtime.GOOS)
}

func reapMain(argv []string) int {
	fmt.Fprintln(os.Stderr, "bench: not supported on "+runtime.GOOS)
	return 1
}
