package proc

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// CloseExtraFDs marks every descriptor above 2 close-on-exec, so the
// script inherits only stdin, stdout and stderr. Marking instead of
// closing keeps the report pipe usable if execve fails.
func CloseExtraFDs() {
	if unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Kernels before 5.11: walk the open descriptors.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		for fd := 3; fd < 4096; fd++ {
			unix.CloseOnExec(fd)
		}
		return
	}
	for _, e := range ents {
		var fd int
		if _, err := fmt.Sscan(e.Name(), &fd); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
