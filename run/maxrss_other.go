//go:build darwin

package run

import (
	"runtime"
	"syscall"
)

// maxRSSKB converts ru_maxrss: bytes on darwin, KiB on the BSDs.
func maxRSSKB(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) / 1024
	}
	return int64(ru.Maxrss)
}
