package netproxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"sync"
	"time"
)

// caValidity is how long the run's authority and its certificates are
// valid: a run is bounded by its timeout, and a certificate that leaked
// would be worth nothing a day later (its key never leaves the proxy's
// memory anyway).
const caValidity = 24 * time.Hour

// authority is the certificate authority of one run: made in memory for
// the secrets' hosts only (its name constraints), it signs the
// certificates the proxy shows the clients of the tunnels it terminates.
// Neither its key nor the leaves' is ever written anywhere.
type authority struct {
	cert    *x509.Certificate
	certPEM []byte
	key     *ecdsa.PrivateKey
	leafKey *ecdsa.PrivateKey // one key for every leaf of the run

	mu     sync.Mutex
	leaves map[target]*tls.Certificate
}

// newAuthority makes a CA (ECDSA P-256) whose name constraints permit the
// names and addresses of hosts only: a client that trusts it trusts it
// for those hosts, never for another. A constraint kind with no entry is
// closed with one that matches nothing real ("invalid", 255.255.255.255),
// since an empty list would permit everything.
func newAuthority(hosts []target) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:                serial(),
		Subject:                     pkix.Name{CommonName: "skill-sandbox run CA (secret hosts only)"},
		NotBefore:                   now.Add(-time.Minute),
		NotAfter:                    now.Add(caValidity),
		KeyUsage:                    x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid:       true,
		IsCA:                        true,
		MaxPathLenZero:              true,
		PermittedDNSDomainsCritical: true,
	}
	for _, h := range hosts {
		if h.addr.IsValid() {
			bits := 32
			if h.addr.Is6() {
				bits = 128
			}
			tmpl.PermittedIPRanges = append(tmpl.PermittedIPRanges, &net.IPNet{IP: h.addr.AsSlice(), Mask: net.CIDRMask(bits, bits)})
		} else {
			tmpl.PermittedDNSDomains = append(tmpl.PermittedDNSDomains, h.host)
		}
	}
	if len(tmpl.PermittedDNSDomains) == 0 {
		tmpl.PermittedDNSDomains = []string{"invalid"}
	}
	if len(tmpl.PermittedIPRanges) == 0 {
		tmpl.PermittedIPRanges = []*net.IPNet{{IP: net.IPv4bcast.To4(), Mask: net.CIDRMask(32, 32)}}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{
		cert:    cert,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:     key,
		leafKey: leafKey,
		leaves:  map[target]*tls.Certificate{},
	}, nil
}

// serial returns a random 128-bit certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return big.NewInt(1) // crypto/rand does not fail on supported systems
	}
	return n
}

// leaf returns the certificate for host t (its name or address), made on
// first use and kept for the run.
func (a *authority) leaf(t target) (*tls.Certificate, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.leaves[t]; c != nil {
		return c, nil
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		// No common name: OpenSSL checks a subject CN that looks like a
		// host name against the DNS constraints, which an IP leaf's
		// address would then fail ("permitted subtree violation").
		SerialNumber: serial(),
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     a.cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if t.addr.IsValid() {
		tmpl.IPAddresses = []net.IP{t.addr.AsSlice()}
	} else {
		tmpl.DNSNames = []string{t.host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &a.leafKey.PublicKey, a.key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der, a.cert.Raw}, PrivateKey: a.leafKey}
	a.leaves[t] = c
	return c, nil
}
