package native

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// AllowlistSupported says whether a host allowlist can be enforced
// here: on Linux it relies on network namespaces.
const AllowlistSupported = true

// start receives the listening sockets the init process created inside
// the run's network namespace (sent before the layer report, so already
// queued): the proxy's, then one per local port, and serves them.
// Accepting on those sockets from here is the relay: a connection the
// script makes to 127.0.0.1:proxyPort (or a local port) in its namespace
// is handed to this process, which has the host's network; the script
// never holds a descriptor of it.
func (pr *proxyRun) start(cfg netproxy.Config, sup *os.File) error {
	ln, err := receiveListener(sup, 'L')
	if err != nil {
		return err
	}
	lns := []net.Listener{ln}
	closeAll := func() {
		for _, l := range lns {
			l.Close()
		}
	}
	for range cfg.LocalPorts {
		l, err := receiveListener(sup, 'P')
		if err != nil {
			closeAll()
			return err
		}
		lns = append(lns, l)
	}
	srv, err := netproxy.New(cfg)
	if err != nil {
		closeAll()
		return err
	}
	pr.srv = srv
	go srv.Serve(lns[0])
	for i, port := range cfg.LocalPorts {
		go srv.ServeLocal(lns[i+1], port)
	}
	return nil
}

// receiveListener receives one listening socket from the init process,
// in a message of the one byte kind.
func receiveListener(sup *os.File, kind byte) (net.Listener, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, flags, _, err := unix.Recvmsg(int(sup.Fd()), buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("receiving the proxy socket: %v", err)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if rights, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, rights...)
			}
		}
	}
	if n != 1 || buf[0] != kind || len(fds) != 1 || flags&unix.MSG_CTRUNC != 0 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("the init process sent no proxy socket")
	}
	f := os.NewFile(uintptr(fds[0]), "proxy-listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("proxy socket: %v", err)
	}
	return ln, nil
}
