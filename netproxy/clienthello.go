package netproxy

import (
	"errors"
	"fmt"
)

// TLS constants of the first record of a tunnel (RFC 8446, RFC 6066).
const (
	recordTypeHandshake   = 0x16
	recordHeaderLen       = 5
	maxRecordPayload      = 1 << 14 // TLSPlaintext.length may not exceed 2^14
	handshakeClientHello  = 1
	extensionServerName   = 0
	serverNameTypeHost    = 0
	maxServerNameLen      = 255
	sessionIDMaxLen       = 32
	helloRandomLen        = 32
	helloLegacyVersionLen = 2
)

// parseRecordHeader checks the 5-byte header of the first TLS record of a
// tunnel: a handshake record of TLS 1.0-1.3 record syntax (legacy version
// 3.0 to 3.4) whose payload length is 1 to 2^14 bytes. It returns that
// length.
func parseRecordHeader(h []byte) (int, error) {
	if len(h) != recordHeaderLen {
		return 0, errors.New("short TLS record header")
	}
	if h[0] != recordTypeHandshake {
		return 0, fmt.Errorf("record type %d is not handshake", h[0])
	}
	if h[1] != 3 || h[2] > 4 {
		return 0, fmt.Errorf("record version %d.%d is not TLS", h[1], h[2])
	}
	n := int(h[3])<<8 | int(h[4])
	if n == 0 || n > maxRecordPayload {
		return 0, fmt.Errorf("record length %d outside 1-%d", n, maxRecordPayload)
	}
	return n, nil
}

// parseClientHello parses the payload of a tunnel's first TLS record,
// which must hold exactly one whole ClientHello (a hello split across
// records, or followed by another message in its record, is refused:
// clients send it whole). It returns the host_name of the server_name
// extension as sent, "" when there is none. The parse is strict but only
// as deep as finding that name needs: every length must fit its
// container exactly, extensions may not repeat, and server_name must hold
// exactly one non-empty host_name.
func parseClientHello(b []byte) (string, error) {
	r := cursor{b: b}
	typ, ok := r.u8()
	if !ok || typ != handshakeClientHello {
		return "", errors.New("the first handshake message is not a ClientHello")
	}
	n, ok := r.u24()
	switch {
	case !ok:
		return "", errors.New("truncated handshake header")
	case n > len(r.b):
		return "", errors.New("ClientHello split across records")
	case n < len(r.b):
		return "", errors.New("data after the ClientHello in its record")
	}
	if !r.skip(helloLegacyVersionLen + helloRandomLen) {
		return "", errors.New("truncated ClientHello")
	}
	if sid, ok := r.vec8(); !ok || len(sid.b) > sessionIDMaxLen {
		return "", errors.New("bad session id")
	}
	if suites, ok := r.vec16(); !ok || len(suites.b) == 0 || len(suites.b)%2 != 0 {
		return "", errors.New("bad cipher suites")
	}
	if methods, ok := r.vec8(); !ok || len(methods.b) == 0 {
		return "", errors.New("bad compression methods")
	}
	if len(r.b) == 0 {
		return "", nil // no extensions (TLS 1.2 and before allow it)
	}
	exts, ok := r.vec16()
	if !ok || len(r.b) != 0 {
		return "", errors.New("bad extensions length")
	}
	seen := map[uint16]bool{}
	name := ""
	for len(exts.b) > 0 {
		typ, ok1 := exts.u16()
		data, ok2 := exts.vec16()
		if !ok1 || !ok2 {
			return "", errors.New("truncated extension")
		}
		if seen[typ] {
			return "", fmt.Errorf("extension %d repeated", typ)
		}
		seen[typ] = true
		if typ != extensionServerName {
			continue
		}
		var err error
		if name, err = parseServerName(data); err != nil {
			return "", err
		}
	}
	return name, nil
}

// parseServerName parses the server_name extension of a ClientHello: a
// list holding exactly one host_name, 1-255 bytes.
func parseServerName(d cursor) (string, error) {
	list, ok := d.vec16()
	if !ok || len(d.b) != 0 || len(list.b) == 0 {
		return "", errors.New("bad server_name extension")
	}
	typ, ok1 := list.u8()
	host, ok2 := list.vec16()
	switch {
	case !ok1 || !ok2:
		return "", errors.New("truncated server_name")
	case typ != serverNameTypeHost:
		return "", fmt.Errorf("server_name type %d is not host_name", typ)
	case len(list.b) != 0:
		return "", errors.New("server_name lists more than one name")
	case len(host.b) == 0 || len(host.b) > maxServerNameLen:
		return "", fmt.Errorf("server name of %d bytes", len(host.b))
	}
	return string(host.b), nil
}

// cursor reads big-endian TLS fields from a byte slice; every read reports
// whether the bytes were there and consumes nothing when they were not.
type cursor struct{ b []byte }

func (c *cursor) skip(n int) bool {
	if len(c.b) < n {
		return false
	}
	c.b = c.b[n:]
	return true
}

func (c *cursor) u8() (int, bool) {
	if len(c.b) < 1 {
		return 0, false
	}
	v := int(c.b[0])
	c.b = c.b[1:]
	return v, true
}

func (c *cursor) u16() (uint16, bool) {
	if len(c.b) < 2 {
		return 0, false
	}
	v := uint16(c.b[0])<<8 | uint16(c.b[1])
	c.b = c.b[2:]
	return v, true
}

func (c *cursor) u24() (int, bool) {
	if len(c.b) < 3 {
		return 0, false
	}
	v := int(c.b[0])<<16 | int(c.b[1])<<8 | int(c.b[2])
	c.b = c.b[3:]
	return v, true
}

// vec8 and vec16 read a vector with a 1- or 2-byte length prefix.
func (c *cursor) vec8() (cursor, bool) {
	if len(c.b) < 1 || len(c.b) < 1+int(c.b[0]) {
		return cursor{}, false
	}
	n := int(c.b[0])
	v := cursor{b: c.b[1 : 1+n]}
	c.b = c.b[1+n:]
	return v, true
}

func (c *cursor) vec16() (cursor, bool) {
	if len(c.b) < 2 {
		return cursor{}, false
	}
	n := int(c.b[0])<<8 | int(c.b[1])
	if len(c.b) < 2+n {
		return cursor{}, false
	}
	v := cursor{b: c.b[2 : 2+n]}
	c.b = c.b[2+n:]
	return v, true
}
