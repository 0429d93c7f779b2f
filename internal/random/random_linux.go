package random

import (
	"crypto/rand"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Read fills b with random bytes from the getrandom(2) system call
// itself. A CLI run draws randomness a few times (its request id, its
// work folder's name), once per process each, and the first draw through crypto/rand costs about 0.1 ms here
// (a one-minute "blocked on entropy" warning timer, which starts the
// runtime's network poller, and the vDSO generator's per-thread state,
// mapped on first use); unix.Getrandom goes through that vDSO generator
// too (about 20 us on first use, against 1 us for the call). getrandom
// blocks until the kernel's pool is initialised, as crypto/rand does; on
// any other failure (ENOSYS before Linux 3.17, EPERM from a seccomp
// filter) crypto/rand, with its fallbacks, reads the bytes instead.
func Read(b []byte) error {
	for len(b) > 0 {
		n, _, errno := unix.Syscall(unix.SYS_GETRANDOM, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0)
		switch {
		case errno == unix.EINTR:
			continue
		case errno != 0:
			_, err := rand.Read(b)
			return err
		}
		b = b[n:]
	}
	return nil
}
