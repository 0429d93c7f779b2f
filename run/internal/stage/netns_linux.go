package stage

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// setupNetNS brings up the loopback interface of the run's new network
// namespace, which starts down. Tools that start a local server and talk
// to it on 127.0.0.1 (test runners, web app checks) then work; the
// namespace has no other interface, so the host's loopback and every other
// network stay out of reach. It needs CAP_NET_ADMIN in the namespace,
// which the init stage holds until the capabilities layer drops it. With a
// host allowlist it then hands the proxy's socket over (see
// handOverProxySocket).
//
// Until the loopback is up nothing has changed: a refusal of those calls
// (refusedOutright) leaves the namespace as good as absent (and without
// any interface). Any other failure, or the proxy's socket not handed
// over, refuses the run (see step.builds).
func setupNetNS(cfg *config) error {
	if err := loopbackUp(); err != nil {
		return err
	}
	if cfg.ProxyPort != 0 {
		return handOverProxySocket(cfg)
	}
	return nil
}

// loopbackUp sets the loopback interface up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return refusedOutright(fmt.Errorf("loopback: socket: %w", err))
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return refusedOutright(fmt.Errorf("loopback: SIOCGIFFLAGS: %w", err))
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return refusedOutright(fmt.Errorf("loopback: SIOCSIFFLAGS: %w", err))
	}
	return nil
}
