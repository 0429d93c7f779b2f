//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSSKB is the peak resident memory of the finished process st in
// KiB (getrusage's ru_maxrss: KiB on Linux, bytes on macOS); 0 unknown.
func peakRSSKB(st *os.ProcessState) int64 {
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) >> 10
	}
	return int64(ru.Maxrss)
}
