package netproxy

import (
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
)

// clientHello returns the first TLS record a crypto/tls client sends for
// cfg: its whole ClientHello.
func clientHello(t testing.TB, cfg *tls.Config) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer b.Close()
	go func() {
		tls.Client(a, cfg).Handshake()
		a.Close()
	}()
	rec := make([]byte, recordHeaderLen)
	if _, err := io.ReadFull(b, rec); err != nil {
		t.Fatal(err)
	}
	n, err := parseRecordHeader(rec)
	if err != nil {
		t.Fatal(err)
	}
	rec = append(rec, make([]byte, n)...)
	if _, err := io.ReadFull(b, rec[recordHeaderLen:]); err != nil {
		t.Fatal(err)
	}
	return rec
}

// helloBody builds a ClientHello handshake message by hand: extensions is
// the raw extensions block (nil for none).
func helloBody(extensions []byte) []byte {
	var body []byte
	body = append(body, 3, 3)                // legacy_version
	body = append(body, make([]byte, 32)...) // random
	body = append(body, 0)                   // session id
	body = append(body, 0, 2, 0x13, 0x01)    // one cipher suite
	body = append(body, 1, 0)                // null compression
	if extensions != nil {
		body = append(body, byte(len(extensions)>>8), byte(len(extensions)))
		body = append(body, extensions...)
	}
	n := len(body)
	return append([]byte{handshakeClientHello, byte(n >> 16), byte(n >> 8), byte(n)}, body...)
}

// ext encodes one extension.
func ext(typ uint16, data []byte) []byte {
	return append([]byte{byte(typ >> 8), byte(typ), byte(len(data) >> 8), byte(len(data))}, data...)
}

// sniData encodes a server_name extension's data listing names as
// host_name entries (or with the name type given by a leading byte in
// types).
func sniData(types []byte, names ...string) []byte {
	var list []byte
	for i, n := range names {
		typ := byte(serverNameTypeHost)
		if i < len(types) {
			typ = types[i]
		}
		list = append(list, typ, byte(len(n)>>8), byte(len(n)))
		list = append(list, n...)
	}
	return append([]byte{byte(len(list) >> 8), byte(len(list))}, list...)
}

func TestParseClientHello(t *testing.T) {
	real := clientHello(t, &tls.Config{ServerName: "api.example.com"})[recordHeaderLen:]
	realNoSNI := clientHello(t, &tls.Config{InsecureSkipVerify: true})[recordHeaderLen:]
	tls12 := clientHello(t, &tls.Config{ServerName: "API.Example.com", MaxVersion: tls.VersionTLS12})[recordHeaderLen:]
	tests := []struct {
		name    string
		body    []byte
		want    string
		wantErr string
	}{
		{"crypto/tls", real, "api.example.com", ""},
		{"crypto/tls without SNI", realNoSNI, "", ""},
		{"crypto/tls 1.2, name as given", tls12, "API.Example.com", ""},
		{"no extensions", helloBody(nil), "", ""},
		{"other extensions only", helloBody(ext(10, []byte{0, 2, 0, 29})), "", ""},
		{"server name", helloBody(ext(0, sniData(nil, "a.example"))), "a.example", ""},
		{"not a ClientHello", append([]byte{2}, helloBody(nil)[1:]...), "", "not a ClientHello"},
		{"split across records", helloBody(ext(0, sniData(nil, "a.example")))[:40], "", "split across records"},
		{"data after the hello", append(helloBody(nil), 0), "", "data after the ClientHello"},
		{"repeated extension", helloBody(append(ext(0, sniData(nil, "a.example")), ext(0, sniData(nil, "b.example"))...)), "", "extension 0 repeated"},
		{"two names", helloBody(ext(0, sniData(nil, "a.example", "b.example"))), "", "more than one name"},
		{"other name type", helloBody(ext(0, sniData([]byte{1}, "a.example"))), "", "not host_name"},
		{"empty name", helloBody(ext(0, sniData(nil, ""))), "", "server name of 0 bytes"},
		{"empty name list", helloBody(ext(0, []byte{0, 0})), "", "bad server_name"},
		{"junk after the name list", helloBody(ext(0, append(sniData(nil, "a.example"), 0))), "", "bad server_name"},
		{"truncated extension", helloBody([]byte{0, 0, 0}), "", "truncated extension"},
		{"empty extensions block", helloBody([]byte{}), "", ""},
		{"empty", nil, "", "not a ClientHello"},
	}
	// A hello whose server_name length overruns the extensions block:
	// handshake header 4, version 2, random 32, session id 1, suites 4,
	// compression 2, extensions length 2, then the extension's type and
	// length (bytes 49 and 50).
	bad := helloBody(ext(0, sniData(nil, "a.example")))
	bad[50]++
	tests = append(tests, struct {
		name    string
		body    []byte
		want    string
		wantErr string
	}{"extension overruns", bad, "", "truncated extension"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseClientHello(tt.body)
			switch {
			case tt.wantErr == "" && (err != nil || got != tt.want):
				t.Errorf("parseClientHello = %q, %v; want %q", got, err, tt.want)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("parseClientHello = %q, %v; want an error with %q", got, err, tt.wantErr)
			}
		})
	}
}

func TestParseRecordHeader(t *testing.T) {
	tests := []struct {
		header  []byte
		want    int
		wantErr string
	}{
		{[]byte{0x16, 3, 1, 0x02, 0x00}, 512, ""},
		{[]byte{0x16, 3, 3, 0x40, 0x00}, 1 << 14, ""},
		{[]byte{0x16, 3, 1, 0x40, 0x01}, 0, "outside"},
		{[]byte{0x16, 3, 1, 0, 0}, 0, "outside"},
		{[]byte{0x17, 3, 3, 0, 5}, 0, "not handshake"},
		{[]byte{0x16, 2, 0, 0, 5}, 0, "not TLS"},
		{[]byte{0x16, 3, 5, 0, 5}, 0, "not TLS"},
		{[]byte("GET /"), 0, "not handshake"},
		{[]byte{0x16, 3}, 0, "short"},
	}
	for _, tt := range tests {
		got, err := parseRecordHeader(tt.header)
		if got != tt.want || (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("parseRecordHeader(% x) = %d, %v; want %d, %q", tt.header, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestSNIMismatch(t *testing.T) {
	name := target{host: "api.example.com", port: 443}
	ip := target{addr: mustAddr(t, "203.0.113.10"), port: 443}
	tests := []struct {
		sni  string
		t    target
		want string // substring of the reason; "" for a match
	}{
		{"", name, ""},
		{"api.example.com", name, ""},
		{"API.Example.COM", name, ""},
		{"www.example.com", name, "TLS server name (SNI) www.example.com differs from the CONNECT host api.example.com"},
		{"api.example.com.", name, "ends with a dot"},
		{"api.example.com..", name, "ends with a dot"},
		{"api.example.com.evil", name, "differs"},
		{"xapi.example.com", name, "differs"},
		{"203.0.113.10", ip, "numeric host name"},
		{"api.example.com", ip, "differs from the CONNECT host 203.0.113.10"},
		{"bücher.example", name, "non-ASCII"},
		{"a\x00b", name, `"a\x00b"`},
	}
	for _, tt := range tests {
		got := sniMismatch(tt.sni, tt.t)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("sniMismatch(%q, %v) = %q, want %q", tt.sni, tt.t, got, tt.want)
		}
	}
}
