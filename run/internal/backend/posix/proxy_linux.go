package posix

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ProxySocketPair returns the supervisor's and the init process's ends of the
// unix socket over which the init process hands over its listening socket.
func ProxySocketPair() (sup, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %v", err)
	}
	return os.NewFile(uintptr(fds[0]), "proxy-supervisor"), os.NewFile(uintptr(fds[1]), "proxy-init"), nil
}
