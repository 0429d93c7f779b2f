//go:build unix

package audit

import (
	"errors"
	"os"
	"syscall"
)

// writeOnce issues exactly one write(2) of b to f (retried only when
// interrupted before anything was written) and returns what it wrote.
// os.File.Write would loop on a short write, and a second write could
// interleave with another process's line.
func writeOnce(f *os.File, b []byte) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), b)
			if !errors.Is(werr, syscall.EINTR) {
				return true
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if werr != nil {
		return 0, werr
	}
	return n, nil
}
