//go:build !unix

package main

import "os"

// peakRSS returns 0: this platform's process usage has no peak RSS in a
// form the benchmark reads, so peak RSS is not reported here.
func peakRSS(ps *os.ProcessState) int64 {
	return 0
}
