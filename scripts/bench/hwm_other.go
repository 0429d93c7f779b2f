//go:build !linux

package main

import (
	"errors"
	"runtime"
)

// supervisorPeakKB is not implemented here: the supervisor's own peak is
// read from /proc while it is stopped at exit, which needs Linux.
func supervisorPeakKB(bin string, args []string) (int64, error) {
	return 0, errors.New("supervisor peak memory is only measured on Linux, not " + runtime.GOOS)
}
