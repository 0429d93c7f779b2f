package netproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// SOCKS5 (RFC 1928) is served on the proxy's own port: a connection whose
// first byte is 5 is a SOCKS greeting, which no HTTP request starts with.
// Only CONNECT without authentication is served; its target goes through
// the same policy, address checks, tunnel checks and record as an HTTP
// CONNECT, so SOCKS opens no path that CONNECT does not.

// SOCKS5 wire values (RFC 1928).
const (
	socksVersion     = 5
	socksNoAuth      = 0x00
	socksNoMethod    = 0xff
	socksCmdConnect  = 1
	socksCmdBind     = 2
	socksCmdUDP      = 3
	socksAtypIPv4    = 1
	socksAtypDomain  = 3
	socksAtypIPv6    = 4
	socksOK          = 0x00
	socksFailure     = 0x01
	socksNotAllowed  = 0x02
	socksHostUnreach = 0x04
	socksCmdUnsupp   = 0x07
	socksAtypUnsupp  = 0x08
)

// socksError is why a SOCKS greeting or request was refused, with the
// reply code to send (none when the greeting itself failed).
type socksError struct {
	reply byte // RFC 1928 REP; socksNoMethod for a greeting without no-auth
	msg   string
}

func (e *socksError) Error() string { return e.msg }

// readSOCKS reads a SOCKS5 greeting, answers it (no authentication) and
// reads the request that follows. It reads at most 2+255 bytes of
// greeting and 4+1+255+2 of request, so its memory is bounded whatever
// the client sends; the caller bounds its time. A *socksError says what
// to reply; any other error is the connection's.
func readSOCKS(br *bufio.Reader, w io.Writer) (target, error) {
	var t target
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return t, err
	}
	if hdr[0] != socksVersion {
		return t, &socksError{msg: fmt.Sprintf("SOCKS version %d: only 5 is served", hdr[0])}
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return t, err
	}
	noAuth := false
	for _, m := range methods {
		noAuth = noAuth || m == socksNoAuth
	}
	if !noAuth {
		w.Write([]byte{socksVersion, socksNoMethod})
		return t, &socksError{reply: socksNoMethod, msg: "SOCKS greeting without the no-authentication method, the only one served"}
	}
	if _, err := w.Write([]byte{socksVersion, socksNoAuth}); err != nil {
		return t, err
	}
	return readSOCKSRequest(br)
}

// readSOCKSRequest reads the request after the greeting: CONNECT only.
func readSOCKSRequest(br *bufio.Reader) (target, error) {
	var t target
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil {
		return t, err
	}
	if req[0] != socksVersion || req[2] != 0 {
		return t, &socksError{reply: socksFailure, msg: fmt.Sprintf("malformed SOCKS request: version %d, reserved byte %d", req[0], req[2])}
	}
	switch req[1] {
	case socksCmdConnect:
	case socksCmdBind, socksCmdUDP:
		return t, &socksError{reply: socksCmdUnsupp, msg: fmt.Sprintf("SOCKS %s is not served: only CONNECT (outgoing TCP)", socksCmdName(req[1]))}
	default:
		return t, &socksError{reply: socksCmdUnsupp, msg: fmt.Sprintf("SOCKS command %d is not defined", req[1])}
	}
	host, err := readSOCKSAddr(br, req[3])
	if err != nil {
		return t, err
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return t, err
	}
	port := int(pb[0])<<8 | int(pb[1])
	if port == 0 {
		return t, &socksError{reply: socksFailure, msg: "SOCKS request for port 0"}
	}
	t, err = parseTarget(net.JoinHostPort(host, strconv.Itoa(port)), 0)
	if err != nil {
		return t, &socksError{reply: socksFailure, msg: "SOCKS request: " + err.Error()}
	}
	return t, nil
}

// readSOCKSAddr reads a request's address of type atyp as a host string.
func readSOCKSAddr(br *bufio.Reader, atyp byte) (string, error) {
	switch atyp {
	case socksAtypIPv4, socksAtypIPv6:
		b := make([]byte, 4)
		if atyp == socksAtypIPv6 {
			b = make([]byte, 16)
		}
		if _, err := io.ReadFull(br, b); err != nil {
			return "", err
		}
		a, _ := netip.AddrFromSlice(b)
		return a.Unmap().String(), nil
	case socksAtypDomain:
		n, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", err
		}
		if n == 0 {
			return "", &socksError{reply: socksFailure, msg: "SOCKS request with an empty host name"}
		}
		return string(b), nil
	}
	return "", &socksError{reply: socksAtypUnsupp, msg: fmt.Sprintf("SOCKS address type %d is not defined", atyp)}
}

func socksCmdName(c byte) string {
	if c == socksCmdBind {
		return "BIND"
	}
	return "UDP ASSOCIATE"
}

// socksReply is a SOCKS5 reply with code rep and an unspecified bound
// address: the client never needs the supervisor's own address.
func socksReply(rep byte) []byte {
	return []byte{socksVersion, rep, 0, socksAtypIPv4, 0, 0, 0, 0, 0, 0}
}

// serveSOCKS serves a connection whose first byte is SOCKS5's: the
// greeting and request within HeaderTimeout, then a tunnel as CONNECT's.
func (p *Proxy) serveSOCKS(c net.Conn, br *bufio.Reader, start time.Time) {
	e := Connection{Method: "SOCKS5"}
	c.SetWriteDeadline(start.Add(p.cfg.HeaderTimeout))
	t, err := readSOCKS(br, c)
	if err != nil {
		var se *socksError
		switch {
		case errors.As(err, &se):
			e.Reason, e.Remedy = "bad request: "+se.msg, socksRemedy
			if se.reply != socksNoMethod && se.reply != 0 {
				p.socksRefuse(c, e, se.reply, start)
				return
			}
			p.logDenied(e)
			p.finish(e, start)
		case isTimeout(err):
			e.Reason = "SOCKS greeting and request not received in time"
			p.logDenied(e)
			p.finish(e, start)
		}
		return // a client that closes mid-greeting says nothing
	}
	c.SetReadDeadline(time.Time{})
	e.Host, e.Port = t.hostname(), t.port
	dialT, d := p.decide(t)
	if e.Rule, e.Reason, e.Remedy = p.refusal(&request{method: "CONNECT", target: t}, d); e.Reason != "" {
		p.socksRefuse(c, e, socksNotAllowed, start)
		return
	}
	up, addr, status, reason := p.connect(dialT, d.IPGrant)
	if up == nil {
		e.Reason = reason
		rep := byte(socksHostUnreach)
		if status == 403 {
			e.Remedy, rep = addrRemedy(t, firstAddr(reason)), socksNotAllowed
		}
		p.socksRefuse(c, e, rep, start)
		return
	}
	if !p.adopt(up, addr, &e, start) { // before the success reply, as CONNECT's 200
		return
	}
	c.SetWriteDeadline(time.Now().Add(p.cfg.IdleTimeout))
	if _, err := c.Write(socksReply(socksOK)); err != nil {
		p.unadopt(up, &e, start, err)
		return
	}
	p.carryTunnel(c, br, up, e, t, d, start)
}

// socksRemedy is the remedy of a malformed SOCKS exchange.
const socksRemedy = "nothing in the policy: the client must send a SOCKS5 CONNECT without authentication (docs/network.md, \"TCP to other ports\")"

// socksRefuse answers a SOCKS request the proxy will not carry and logs it.
func (p *Proxy) socksRefuse(c net.Conn, e Connection, rep byte, start time.Time) {
	p.logDenied(e)
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(socksReply(rep))
	p.finish(e, start)
}
