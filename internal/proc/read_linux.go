package proc

import (
	"errors"

	"golang.org/x/sys/unix"
)

// ErrTooLarge is ReadFile's error for a file past its bound.
var ErrTooLarge = errors.New("file larger than expected")

// ReadFile reads a small kernel file (procfs, sysfs, cgroupfs) of at most
// max bytes with plain system calls: open, read until end of file, close.
// os.ReadFile costs twice the calls on such files, which the runtime
// registers with its poller first; that adds up on every run's start.
func ReadFile(path string, max int) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, min(max+1, 4096))
	n := 0
	for {
		if n == len(buf) {
			if len(buf) > max {
				return nil, ErrTooLarge
			}
			buf = append(buf, make([]byte, min(len(buf), max+1-len(buf)))...)
		}
		k, err := unix.Read(fd, buf[n:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, err
		case k == 0:
			return buf[:n], nil
		}
		n += k
	}
}
