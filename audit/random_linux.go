package audit

import (
	"crypto/rand"

	"golang.org/x/sys/unix"
)

// readRandom fills b with random bytes from getrandom(2) itself. The first
// use of crypto/rand in a process costs about 0.1 ms here (a one-minute
// warning timer, which starts the runtime's network poller, and the vDSO
// generator's state, mapped on first use), and the CLI's request id is the
// only randomness a run draws, once per process. getrandom blocks until the
// kernel's pool is initialised, as crypto/rand does; on any other failure
// (ENOSYS before Linux 3.17, EPERM from a seccomp filter) crypto/rand, with
// its fallbacks, reads the bytes instead.
func readRandom(b []byte) error {
	for len(b) > 0 {
		n, err := unix.Getrandom(b, 0)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			_, err = rand.Read(b)
			return err
		}
		b = b[n:]
	}
	return nil
}
