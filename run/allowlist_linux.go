package run

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// hostAllowlistSupported: the allowlist relies on network namespaces.
const hostAllowlistSupported = true

// start receives the listening socket the init process created inside
// the run's network namespace (it was sent before the layer report, so it
// is already queued) and serves the proxy on it. Accepting on that socket
// from here is the relay: a connection the script makes to
// 127.0.0.1:proxyPort in its namespace is handed to this process, which
// has the host's network; the script never holds a descriptor of it.
func (pr *proxyRun) start(cfg netproxy.Config, sup *os.File) error {
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
		return errors.New("the init process sent no proxy socket")
	}
	f := os.NewFile(uintptr(fds[0]), "proxy-listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("proxy socket: %v", err)
	}
	srv, err := netproxy.New(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	pr.srv = srv
	go srv.Serve(ln)
	return nil
}
