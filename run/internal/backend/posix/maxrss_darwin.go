//go:build darwin

package posix

import (
	"runtime"
	"syscall"
)

// MaxRSSKB converts ru_maxrss: bytes on darwin, KiB on the BSDs.
func MaxRSSKB(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) / 1024
	}
	return int64(ru.Maxrss)
}
