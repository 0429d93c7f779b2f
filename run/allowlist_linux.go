package run

import (
	"errors"
	"fmt"
	"net"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// hostAllowlistSupported: the allowlist relies on network namespaces.
const hostAllowlistSupported = true

// proxySocketPair returns the supervisor's and the init stage's ends of the
// unix socket over which the init stage hands over its listening socket.
func proxySocketPair() (sup, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %v", err)
	}
	return os.NewFile(uintptr(fds[0]), "proxy-supervisor"), os.NewFile(uintptr(fds[1]), "proxy-init"), nil
}

// startProxy receives the listening socket the init stage created inside
// the run's network namespace (it was sent before the layer report, so it
// is already queued) and serves the proxy on it. Accepting on that socket
// from here is the relay: a connection the script makes to
// 127.0.0.1:proxyPort in its namespace is handed to this process, which
// has the host's network; the script never holds a descriptor of it.
func (pp *proxyPlan) start(sup *os.File) error {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, flags, _, err := unix.Recvmsg(int(sup.Fd()), buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return fmt.Errorf("receiving the proxy socket: %v", err)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if rights, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, rights...)
			}
		}
	}
	if n != 1 || buf[0] != 'L' || len(fds) != 1 || flags&unix.MSG_CTRUNC != 0 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return errors.New("the init stage sent no proxy socket")
	}
	f := os.NewFile(uintptr(fds[0]), "proxy-listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("proxy socket: %v", err)
	}
	srv, err := netproxy.New(pp.cfg)
	if err != nil {
		ln.Close()
		return err
	}
	pp.srv = srv
	go srv.Serve(ln)
	return nil
}

// handOverProxySocket runs in the init stage inside the new network
// namespace, after setupNetNS brought loopback up, when the run has a host
// allowlist: it creates the proxy's listening socket on
// 127.0.0.1:ProxyPort and sends it to the supervisor over ProxyFD, which
// is then closed, so nothing of the relay is left for the script but the
// port itself.
func handOverProxySocket(cfg *initConfig) error {
	defer unix.Close(cfg.ProxyFD)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("proxy socket: %v", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: cfg.ProxyPort, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("proxy socket: bind 127.0.0.1:%d: %v", cfg.ProxyPort, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return fmt.Errorf("proxy socket: listen: %v", err)
	}
	if err := unix.Sendmsg(cfg.ProxyFD, []byte{'L'}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("proxy socket: handing over: %v", err)
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
		return fmt.Errorf("landlock rule for the proxy port: %v", errno)
	}
	return nil
}
