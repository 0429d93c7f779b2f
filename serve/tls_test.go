package serve

import (
	"crypto/tls"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestTLSSettings: the server's TLS refuses TLS 1.0 and 1.1, and in TLS
// 1.2 the CBC suites (SHA-1 MACs, Lucky13-style padding oracles) that Go
// still accepts by default; an AEAD suite with ECDHE and TLS 1.3 work.
func TestTLSSettings(t *testing.T) {
	f := newFixture(t, nil)
	hs := f.srv.HTTPServer()
	ts := httptest.NewUnstartedServer(hs.Handler)
	ts.TLS = hs.TLSConfig.Clone()
	ts.StartTLS()
	defer ts.Close()
	addr := strings.TrimPrefix(ts.URL, "https://")
	cbc := []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
	}
	for _, c := range []struct {
		name     string
		min, max uint16
		suites   []uint16
		ok       bool
	}{
		{"TLS 1.0", tls.VersionTLS10, tls.VersionTLS10, nil, false},
		{"TLS 1.1", tls.VersionTLS11, tls.VersionTLS11, nil, false},
		{"TLS 1.2 CBC", tls.VersionTLS12, tls.VersionTLS12, cbc, false},
		{"TLS 1.2 AEAD", tls.VersionTLS12, tls.VersionTLS12, nil, true},
		{"TLS 1.3", tls.VersionTLS13, tls.VersionTLS13, nil, true},
	} {
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, MinVersion: c.min, MaxVersion: c.max, CipherSuites: c.suites})
		if err == nil {
			st := conn.ConnectionState()
			conn.Close()
			if !c.ok {
				t.Errorf("%s: handshake succeeded with %s", c.name, tls.CipherSuiteName(st.CipherSuite))
			}
			continue
		}
		if c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
