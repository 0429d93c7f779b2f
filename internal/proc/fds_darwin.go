//go:build darwin

package proc

import (
	"golang.org/x/sys/unix"
)

// CloseExtraFDs marks every descriptor above 2 close-on-exec.
func CloseExtraFDs() {
	var lim unix.Rlimit
	max := 1024
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < 1<<16 {
		max = int(lim.Cur)
	}
	for fd := 3; fd < max; fd++ {
		unix.CloseOnExec(fd)
	}
}
