package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// proxyLatency is the cost of the host allowlist: one HTTPS request from
// curl in the sandbox to a server on the host's loopback, through the
// filtering proxy (--allow-host 127.0.0.1:PORT, an explicit IP grant)
// versus directly (--allow-network).
type proxyLatency struct {
	// request is curl's own time_total for the request; run is the wall
	// time of the whole skill-sandbox call.
	direct, proxied       []time.Duration
	directRun, proxiedRun []time.Duration
	err                   error
}

// fetchScript prints curl's total time of one HTTPS request, in seconds.
const fetchScript = "#!/bin/sh\ncurl -sS -o /dev/null -w '%{time_total}\\n' --cacert ../references/ca.pem \"$1\"\n"

// measureProxy starts an HTTPS server on 127.0.0.1 with a certificate made
// here and times n requests each way, alternating.
func measureProxy(o options, base string, n int) proxyLatency {
	var r proxyLatency
	if _, err := lookSystem("curl"); err != nil {
		r.err = err
		return r
	}
	ln, caPEM, err := httpsServer()
	if err != nil {
		r.err = err
		return r
	}
	defer ln.Close()
	k := kind{label: "https", skill: "bench-https", script: "fetch.sh", body: fetchScript}
	if err := makeSkill(base, k); err != nil {
		r.err = err
		return r
	}
	refs := filepath.Join(base, k.skill, "references")
	if err := os.MkdirAll(refs, 0o755); err == nil {
		err = os.WriteFile(filepath.Join(refs, "ca.pem"), caPEM, 0o644)
	}
	if err != nil {
		r.err = err
		return r
	}
	addr := ln.Addr().String()
	url := "https://" + addr + "/"
	skill := filepath.Join(base, k.skill)
	direct := []string{"run", "--allow-network", skill, k.script, url}
	proxied := []string{"run", "--allow-host", addr, skill, k.script, url}
	for i := 0; i < n+2; i++ {
		for _, c := range []struct {
			args      []string
			req, wall *[]time.Duration
		}{{direct, &r.direct, &r.directRun}, {proxied, &r.proxied, &r.proxiedRun}} {
			start := time.Now()
			d, err := curlTime(o.bin, c.args)
			wall := time.Since(start)
			if err != nil {
				r.err = err
				return r
			}
			if i >= 2 { // the first two warm the caches
				*c.req = append(*c.req, d)
				*c.wall = append(*c.wall, wall)
			}
		}
	}
	return r
}

// curlTime runs skill-sandbox with args and parses the script's output.
func curlTime(bin string, args []string) (time.Duration, error) {
	cmd := exec.Command(bin, args...)
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%v %v: %w: %s", bin, args, err, strings.TrimSpace(errBuf.String()))
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		return 0, fmt.Errorf("curl printed %q: %s", out, strings.TrimSpace(errBuf.String()))
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// httpsServer serves a small answer over TLS on 127.0.0.1 and returns the
// listener and its self-signed certificate in PEM.
func httpsServer() (net.Listener, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })}
	go srv.Serve(tls.NewListener(ln, cfg))
	return ln, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// printProxy adds the proxy rows to the table.
func printProxy(w io.Writer, r proxyLatency) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| one HTTPS request from curl in the sandbox to 127.0.0.1 | `--allow-network` (direct) | `--allow-host` (proxy) | added | ratio |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	if r.err != nil {
		fmt.Fprintf(w, "| failed: %v | | | | |\n", r.err)
		return
	}
	for _, row := range []struct {
		what         string
		direct, prox []time.Duration
	}{
		{"the request (curl time_total)", r.direct, r.proxied},
		{"the whole skill-sandbox call", r.directRun, r.proxiedRun},
	} {
		d, p := quantile(row.direct, 0.5), quantile(row.prox, 0.5)
		fmt.Fprintf(w, "| %s, median of %d | %s | %s | %s | %.1f× |\n",
			row.what, len(row.direct), ms(d), ms(p), ms(p-d), float64(p)/float64(d))
	}
}
