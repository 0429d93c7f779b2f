package stage

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// handOverProxySocket runs in the init stage inside the new network
// namespace, after setupNetNS brought loopback up, when the run has a host
// allowlist: it creates the proxy's listening socket on
// 127.0.0.1:ProxyPort and sends it to the supervisor over ProxyFD, which
// is then closed, so nothing of the relay is left for the script but the
// port itself.
func handOverProxySocket(cfg *config) error {
	defer unix.Close(cfg.ProxyFD)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("proxy socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: cfg.ProxyPort, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("proxy socket: bind 127.0.0.1:%d: %w", cfg.ProxyPort, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return fmt.Errorf("proxy socket: listen: %w", err)
	}
	if err := unix.Sendmsg(cfg.ProxyFD, []byte{'L'}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("proxy socket: handing over: %w", err)
	}
	return nil
}

// llNetPortAttr is struct landlock_net_port_attr.
type llNetPortAttr struct {
	allowedAccess uint64
	port          uint64
}

// llRuleNetPort is LANDLOCK_RULE_NET_PORT.
const llRuleNetPort = 2

// addProxyPortRule lets the script connect (not bind) to the proxy's port.
// Landlock TCP rules name ports, not addresses; inside the namespace only
// loopback exists, so this reaches the proxy and nothing else.
func addProxyPortRule(ruleset int, port int) error {
	attr := llNetPortAttr{allowedAccess: unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, port: uint64(port)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(ruleset), llRuleNetPort, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock rule for the proxy port: %w", errno)
	}
	return nil
}
