package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"
)

// tlsPort is the port whose tunnels must carry TLS: HTTPS. On other ports
// a tunnel is checked as TLS only when its first byte says it is.
const tlsPort = 443

// TLS alerts sent to the client of a refused ClientHello (RFC 8446 6.2).
const (
	alertDecodeError      = 50
	alertUnrecognizedName = 112
)

// tunnelRefusal is why a tunnel that passed the host checks was closed on
// its first bytes, before any of them reached the server.
type tunnelRefusal struct {
	reason string
	remedy string
	alert  byte // TLS alert description sent to the client; 0 for none
}

func (e *tunnelRefusal) Error() string { return e.reason }

// alertRecord is a fatal TLS alert record with description d.
func alertRecord(d byte) []byte {
	return []byte{0x15, 3, 3, 0, 2, 2, d}
}

// firstRecord reads and checks the first bytes the client sends through
// a CONNECT tunnel to t, and returns what to send to the server first.
//
// A tunnel to port 443 must start with a TLS record holding a whole
// ClientHello within HeaderTimeout. On other ports the client may wait
// (the server may speak first: last is the relay's last progress, and
// the wait ends as the relay's idle timeout does); if its first byte is a
// TLS handshake record's, that record is checked as on port 443,
// otherwise the bytes are left in br and relayed unchecked (the host alone
// decided). A ClientHello whose server name (SNI) differs from the
// CONNECT host is refused: the allowed host's address could otherwise
// serve another site (domain fronting).
//
// A *tunnelRefusal error refuses the tunnel; any other error (the client
// closed, the relay was aborted) just ends it.
func (p *Proxy) firstRecord(c net.Conn, br *bufio.Reader, t target, last *atomic.Int64) ([]byte, error) {
	defer c.SetReadDeadline(time.Time{})
	idle := p.cfg.IdleTimeout
	if t.port == tlsPort {
		c.SetReadDeadline(time.Now().Add(p.cfg.HeaderTimeout))
	}
	for {
		if t.port != tlsPort {
			c.SetReadDeadline(time.Now().Add(idle))
		}
		_, err := br.Peek(1)
		if err == nil {
			break
		}
		if isTimeout(err) && t.port == tlsPort {
			return nil, &tunnelRefusal{reason: fmt.Sprintf("no TLS ClientHello within %v: port %d carries TLS only", p.cfg.HeaderTimeout, tlsPort), remedy: tlsOnlyRemedy}
		}
		if isTimeout(err) && time.Since(time.Unix(0, last.Load())) < idle {
			continue // the server is talking: the client may wait
		}
		return nil, err
	}
	b, _ := br.Peek(1)
	if b[0] != recordTypeHandshake {
		if t.port == tlsPort {
			return nil, &tunnelRefusal{reason: fmt.Sprintf("the tunnel's first byte 0x%02x does not start a TLS handshake: port %d carries TLS only", b[0], tlsPort), remedy: tlsOnlyRemedy}
		}
		return nil, nil
	}
	if t.port != tlsPort {
		c.SetReadDeadline(time.Now().Add(p.cfg.HeaderTimeout))
	}
	rec := make([]byte, recordHeaderLen)
	if _, err := io.ReadFull(br, rec); err != nil {
		return nil, recordReadError(err, p.cfg.HeaderTimeout)
	}
	n, err := parseRecordHeader(rec)
	if err != nil {
		return nil, &tunnelRefusal{reason: "malformed TLS record: " + err.Error(), alert: alertDecodeError, remedy: badRequestFix}
	}
	rec = append(rec, make([]byte, n)...)
	if _, err := io.ReadFull(br, rec[recordHeaderLen:]); err != nil {
		return nil, recordReadError(err, p.cfg.HeaderTimeout)
	}
	sni, err := parseClientHello(rec[recordHeaderLen:])
	if err != nil {
		return nil, &tunnelRefusal{reason: "malformed TLS ClientHello: " + err.Error(), alert: alertDecodeError, remedy: badRequestFix}
	}
	if why := sniMismatch(sni, t); why != "" {
		return nil, &tunnelRefusal{reason: why, alert: alertUnrecognizedName, remedy: sniRemedy(sni, t)}
	}
	return rec, nil
}

// recordReadError turns a failed read of the first TLS record into a
// refusal when the client was too slow, and passes any other error on.
func recordReadError(err error, limit time.Duration) error {
	if isTimeout(err) {
		return &tunnelRefusal{reason: fmt.Sprintf("TLS ClientHello not received within %v", limit)}
	}
	return err
}

// sniMismatch says why the server name sni of a ClientHello does not
// name the CONNECT target t, "" when it does or there is none. Names
// compare as the allow list's do (ASCII, case-insensitive); a trailing
// dot, which RFC 6066 forbids in the extension, is refused rather than
// dropped, and an IP address target matches no name at all.
func sniMismatch(sni string, t target) string {
	if sni == "" {
		return ""
	}
	if strings.HasSuffix(sni, ".") {
		return fmt.Sprintf("TLS server name (SNI) %q ends with a dot, which RFC 6066 forbids", sni)
	}
	name, err := normalizeName(sni)
	if err != nil {
		return fmt.Sprintf("TLS server name (SNI) %q: %v", sni, err)
	}
	if t.addr.IsValid() || name != t.host {
		return fmt.Sprintf("TLS server name (SNI) %s differs from the CONNECT host %s", name, t.hostname())
	}
	return ""
}
