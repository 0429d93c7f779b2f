package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"
)

// LocalHost is the name under which a client reaches a local port
// (Config.LocalPorts) through the proxy, besides the literal 127.0.0.1:
// "localhost:PORT" means the host's 127.0.0.1:PORT, as 127.0.0.1:PORT
// inside the run does.
const LocalHost = "localhost"

// localLoopback is the only address a local port is ever dialled at.
var localLoopback = netip.AddrFrom4([4]byte{127, 0, 0, 1})

// CheckLocalPort refuses a port that cannot be a local service's: out of
// range, or reserved (the proxy's own port in the run).
func CheckLocalPort(port int, reserved ...int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("local port %d out of range (1-65535)", port)
	}
	for _, r := range reserved {
		if port == r {
			return fmt.Errorf("local port %d is the proxy's own port in the run", port)
		}
	}
	return nil
}

// ParseLocalPort parses a local port as --allow-local and a policy's
// allow_local take it: decimal digits only, no sign or leading zero,
// 1 to 65535.
func ParseLocalPort(s string) (int, error) {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return 0, fmt.Errorf("local port %q: want a port number from 1 to 65535", truncateForError(s))
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("local port %q: want a port number from 1 to 65535", truncateForError(s))
		}
		n = n*10 + int(c-'0')
	}
	return n, CheckLocalPort(n)
}

// localRule is the record's rule of a connection to a local port.
func localRule(port int) string { return "allow-local " + strconv.Itoa(port) }

// localRemedy is the remedy of a refused connection to the host's
// loopback at port.
func localRemedy(port int) string {
	return fmt.Sprintf("--allow-local %d (a service on the host's 127.0.0.1:%d), or %d in [network] allow_local of the operator policy (--policy)", port, port, port)
}

// isLocalForm reports whether t names the loopback in a form the proxy
// maps to a local port: the name localhost or the literal 127.0.0.1.
func isLocalForm(t target) bool {
	return t.host == LocalHost || t.addr == localLoopback
}

// localPort reports whether port is one of cfg.LocalPorts.
func (p *Proxy) localPort(port int) bool {
	for _, l := range p.cfg.LocalPorts {
		if l == port {
			return true
		}
	}
	return false
}

// decide is the policy's decision on t, with local ports: localhost:PORT
// and 127.0.0.1:PORT of a local port are allowed and dialled at
// 127.0.0.1:PORT itself (never resolved, never another address). It
// returns the target to dial and the decision.
func (p *Proxy) decide(t target) (target, Decision) {
	if isLocalForm(t) && p.localPort(t.port) {
		return target{addr: localLoopback, port: t.port}, Decision{Allowed: true, Rule: localRule(t.port), IPGrant: true}
	}
	d := p.cfg.Policy.check(t)
	if !d.Allowed && isLocalForm(t) && d.Rule == "" && t.port != p.cfg.OwnPort {
		// For the literal an IP grant works too (through the proxy
		// only); the name would resolve to refused addresses.
		if t.addr.IsValid() {
			d.Remedy = localRemedy(t.port) + "; or " + d.Remedy
		} else {
			d.Remedy = localRemedy(t.port)
		}
	}
	return t, d
}

// ServeLocal accepts connections on ln until ln is closed or Close is
// called, and relays each, byte for byte, to the host's 127.0.0.1:port,
// which must be one of Config.LocalPorts. Nothing a client sends can
// change where a connection goes: the address is fixed, no request is
// read. Each connection counts in the Report (method "LOCAL") and under
// the same bounds as the proxy's (MaxConns, IdleTimeout, DialTimeout).
func (p *Proxy) ServeLocal(ln net.Listener, port int) error {
	if !p.localPort(port) {
		ln.Close()
		return fmt.Errorf("netproxy: port %d is not a local port of the proxy", port)
	}
	return p.serve(ln, func(c net.Conn) { p.serveLocalConn(c, port) })
}

// serveLocalConn relays one connection of a local port's listener.
func (p *Proxy) serveLocalConn(c net.Conn, port int) {
	start := time.Now()
	e := Connection{Method: "LOCAL", Host: localLoopback.String(), Port: port, Rule: localRule(port)}
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	default:
		e.Reason = "too many connections"
		p.logDenied(e)
		p.finish(e, start)
		return
	}
	ap := netip.AddrPortFrom(localLoopback, uint16(port))
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.DialTimeout)
	up, err := p.dial(ctx, ap)
	cancel()
	if err != nil {
		e.Reason = fmt.Sprintf("cannot connect to the host's %s: %v", ap, err)
		e.Remedy = fmt.Sprintf("start the service on the host's %s", ap)
		p.logDenied(e)
		p.finish(e, start)
		return
	}
	if !p.adopt(up, ap, &e, start) {
		return
	}
	defer p.untrack(up)
	br := bufio.NewReaderSize(c, 4<<10)
	e.BytesUp, e.BytesDown, _ = p.relay(c, br, up, func(*atomic.Int64) ([]byte, io.Reader, error) { return nil, nil, nil })
	p.finish(e, start)
}

// dial connects to a checked address: cfg.Dial, or a net.Dialer.
func (p *Proxy) dial(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	if p.cfg.Dial != nil {
		return p.cfg.Dial(ctx, ap)
	}
	// No TCP keep-alive: the relay's idle timeout ends a dead connection
	// first, and its four setsockopt calls were a cost of every request.
	d := net.Dialer{KeepAlive: -1}
	return d.DialContext(ctx, "tcp", ap.String())
}
