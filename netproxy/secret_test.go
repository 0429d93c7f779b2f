package netproxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/testca"
)

const testSecretValue = "s3cr3t-VALUE-7c1f"

// newTestCA is a CA of the test's own, standing for the public PKI that
// verifies the real servers of the secrets' hosts.
func newTestCA(t testing.TB) *testca.CA {
	t.Helper()
	ca, err := testca.New()
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// serverCert is a certificate of ca for names and IPs.
func serverCert(t testing.TB, ca *testca.CA, names ...string) tls.Certificate {
	t.Helper()
	c, err := ca.Server(names...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// seen is one request a test server received.
type seen struct {
	host, uri, auth, key, body string
}

// secretFixture is a proxy with secrets for api.example.com in front of
// an HTTPS server (api.example.com and other.example.com, certificates of
// a test CA) and a plain one, both recording what they receive.
type secretFixture struct {
	*fixture
	secrets *Secrets
	got     chan seen
	ca      *testca.CA
	// clientRoots trusts the run's CA and the test CA.
	clientRoots *x509.CertPool
}

func newSecretFixture(t testing.TB, specs ...string) *secretFixture {
	t.Helper()
	return newSecretFixtureAllow(t, []string{"api.example.com", "other.example.com"}, specs...)
}

// newSecretFixtureAllow is newSecretFixture with the allow list allow.
func newSecretFixtureAllow(t testing.TB, allow []string, specs ...string) *secretFixture {
	t.Helper()
	ca := newTestCA(t)
	got := make(chan seen, 100)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		got <- seen{host: r.Host, uri: r.RequestURI, auth: r.Header.Get("Authorization"), key: r.Header.Get("X-Api-Key"), body: string(body)}
		fmt.Fprintf(w, "hello from %s %s", r.Host, r.URL.Path)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		got <- seen{host: r.Host, uri: r.RequestURI, auth: r.Header.Get("Authorization")}
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	secure := httptest.NewUnstartedServer(mux)
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert(t, ca, "api.example.com", "other.example.com", "127.0.0.1")}}
	secure.StartTLS()
	t.Cleanup(secure.Close)
	plain := httptest.NewServer(mux)
	t.Cleanup(plain.Close)
	tn := &testNet{
		names: map[string][]string{
			"api.example.com":   {"203.0.113.10"},
			"other.example.com": {"203.0.113.11"},
		},
		routes: map[string]string{
			"203.0.113.10:443": secure.Listener.Addr().String(),
			"203.0.113.11:443": secure.Listener.Addr().String(),
			"203.0.113.10:80":  plain.Listener.Addr().String(),
			"203.0.113.11:80":  plain.Listener.Addr().String(),
		},
	}
	if len(specs) == 0 {
		specs = []string{"TOKEN@api.example.com", "KEY@api.example.com,url"}
	}
	var list []Secret
	for _, s := range specs {
		sec, err := ParseSecret(s)
		if err != nil {
			t.Fatal(err)
		}
		sec.Value = testSecretValue
		list = append(list, sec)
	}
	secrets, err := NewSecrets(list)
	if err != nil {
		t.Fatal(err)
	}
	denied := &lockedBuffer{}
	pol, err := NewPolicy(allow, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Policy: pol, Resolve: tn.resolve, Dial: tn.dial, Denied: denied, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	p.roots = ca.Pool()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	t.Cleanup(func() { p.Close() })
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(secrets.CACertPEM())
	roots.AddCert(ca.Cert)
	pu, _ := url.Parse("http://" + ln.Addr().String())
	client := &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: roots}},
		Timeout:   10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	t.Cleanup(client.CloseIdleConnections)
	f := &fixture{proxy: p, addr: ln.Addr().String(), client: client, denied: denied, net: tn}
	return &secretFixture{fixture: f, secrets: secrets, got: got, ca: ca, clientRoots: roots}
}

// next returns the next request a test server received, or fails.
func (f *secretFixture) next(t testing.TB) seen {
	t.Helper()
	select {
	case s := <-f.got:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("the server received no request")
		return seen{}
	}
}

// none checks that no server received a request.
func (f *secretFixture) none(t testing.TB) {
	t.Helper()
	select {
	case s := <-f.got:
		t.Errorf("a server received %+v", s)
	case <-time.After(100 * time.Millisecond):
	}
}

func (f *secretFixture) do(t testing.TB, method, u string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestSecretInjected(t *testing.T) {
	f := newSecretFixture(t)
	env := f.secrets.Env()
	tok, key := env["TOKEN"], env["KEY"]
	if !strings.HasPrefix(tok, placeholderPrefix) || len(tok) != len(placeholderPrefix)+64 || tok == key {
		t.Fatalf("placeholders %q %q", tok, key)
	}
	status, body := f.do(t, "GET", "https://api.example.com/v1/items?k="+key+"&t="+tok, map[string]string{
		"Authorization": "Bearer " + tok,
		"X-Api-Key":     key,
	})
	if status != 200 || body != "hello from api.example.com /v1/items" {
		t.Fatalf("%d %q", status, body)
	}
	s := f.next(t)
	if s.auth != "Bearer "+testSecretValue || s.key != testSecretValue {
		t.Errorf("headers reached the server as %+v", s)
	}
	// KEY allows the URL, TOKEN does not: its placeholder stays.
	if want := "/v1/items?k=" + testSecretValue + "&t=" + tok; s.uri != want {
		t.Errorf("target %q, want %q", s.uri, want)
	}
	e := lastConnection(t, f.proxy, 1)
	if !e.Allowed || strings.Join(e.Secrets, ",") != "KEY,TOKEN" || e.Method != "CONNECT" {
		t.Errorf("connection %+v", e)
	}
	if got := strings.Join(f.secrets.Targets(), ";"); got != "KEY api.example.com:443;TOKEN api.example.com:443" {
		t.Errorf("targets %q", got)
	}

	// git and curl send a URL's user:password as Basic credentials.
	req, _ := http.NewRequest("GET", "https://api.example.com/basic", nil)
	req.SetBasicAuth("x-access-token", tok)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s = f.next(t)
	want := http.Request{Header: http.Header{}}
	want.SetBasicAuth("x-access-token", testSecretValue)
	if s.auth != want.Header.Get("Authorization") {
		t.Errorf("basic credentials reached the server as %q", s.auth)
	}
}

// TestSecretStaysPlaceholder: a placeholder sent anywhere but its host, or
// to its host over plain HTTP, reaches the server as the placeholder.
func TestSecretStaysPlaceholder(t *testing.T) {
	f := newSecretFixture(t)
	tok := f.secrets.Env()["TOKEN"]
	for _, u := range []string{
		"https://other.example.com/leak?t=" + tok,
		"http://other.example.com/leak?t=" + tok,
		"http://api.example.com/plain?t=" + tok,
	} {
		status, _ := f.do(t, "GET", u, map[string]string{"Authorization": "Bearer " + tok})
		s := f.next(t)
		if status != 200 || s.auth != "Bearer "+tok || !strings.HasSuffix(s.uri, tok) {
			t.Errorf("%s: status %d, server saw %+v", u, status, s)
		}
		if strings.Contains(s.auth+s.uri, testSecretValue) {
			t.Errorf("%s: the value reached the server", u)
		}
	}
	// A body is never rewritten, even to the secret's host.
	req, _ := http.NewRequest("POST", "https://api.example.com/body", strings.NewReader("token="+tok))
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := f.next(t); s.body != "token="+tok {
		t.Errorf("body reached the server as %q", s.body)
	}
}

// TestSecretRedirect: the proxy never follows a redirect: the client gets
// the 302 as the server sent it, and the server got one request.
func TestSecretRedirect(t *testing.T) {
	f := newSecretFixture(t)
	tok := f.secrets.Env()["TOKEN"]
	status, _ := f.do(t, "GET", "https://api.example.com/redirect?to=https://other.example.com/stolen", map[string]string{"Authorization": "Bearer " + tok})
	if status != 302 {
		t.Fatalf("status %d", status)
	}
	if s := f.next(t); s.uri != "/redirect?to=https://other.example.com/stolen" {
		t.Errorf("server saw %+v", s)
	}
	f.none(t)
}

// innerConn opens a tunnel to hostport and a TLS connection inside it that
// trusts the fixture's roots, with server name sni.
func (f *secretFixture) innerConn(t *testing.T, hostport, sni string) (*tls.Conn, error) {
	t.Helper()
	c := openTunnel(t, f.addr, hostport)
	tc := tls.Client(c, &tls.Config{ServerName: sni, RootCAs: f.clientRoots})
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	return tc, tc.Handshake()
}

// TestSecretAttacks are the attacks on a terminated tunnel: each tries to
// get the value sent somewhere else or past the proxy's reading, and each
// is refused with nothing of it reaching a server.
func TestSecretAttacks(t *testing.T) {
	f := newSecretFixture(t)
	tok := f.secrets.Env()["TOKEN"]
	tests := []struct {
		name, req, want string
	}{
		{"other Host", "GET / HTTP/1.1\r\nHost: other.example.com\r\nAuthorization: Bearer " + tok + "\r\n\r\n", "400 Bad Request"},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: api.example.com\r\nHost: other.example.com\r\nAuthorization: " + tok + "\r\n\r\n", "400 Bad Request"},
		{"no Host", "GET / HTTP/1.1\r\nAuthorization: " + tok + "\r\n\r\n", "400 Bad Request"},
		{"absolute URI", "GET https://other.example.com/ HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: " + tok + "\r\n\r\n", "400 Bad Request"},
		{"CL and TE", "POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\nAuthorization: " + tok + "\r\n\r\n0\r\n\r\n", "400 Bad Request"},
		{"two CL", "POST / HTTP/1.1\r\nHost: api.example.com\r\nContent-Length: 4\r\nContent-Length: 5\r\nAuthorization: " + tok + "\r\n\r\nabcde", "400 Bad Request"},
		{"obs-fold", "GET / HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: x\r\n " + tok + "\r\n\r\n", "400 Bad Request"},
		{"bare LF", "GET / HTTP/1.1\nHost: api.example.com\nAuthorization: " + tok + "\n\n", "400 Bad Request"},
		{"TE not chunked", "POST / HTTP/1.1\r\nHost: api.example.com\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "400 Bad Request"},
	}
	for _, tt := range tests {
		tc, err := f.innerConn(t, "api.example.com:443", "api.example.com")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		io.WriteString(tc, tt.req)
		line, _ := bufio.NewReader(tc).ReadString('\n')
		if !strings.Contains(line, tt.want) {
			t.Errorf("%s: got %q, want %s", tt.name, line, tt.want)
		}
		tc.Close()
		f.none(t)
	}

	// A second request smuggled behind the first on one connection.
	tc, err := f.innerConn(t, "api.example.com:443", "api.example.com")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(tc, "GET /first HTTP/1.1\r\nHost: api.example.com\r\n\r\nGET /second HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: "+tok+"\r\n\r\n")
	io.ReadAll(tc)
	if s := f.next(t); s.uri != "/first" {
		t.Errorf("first request %+v", s)
	}
	f.none(t)

	// SNI naming another host inside the tunnel to the secret's host.
	if _, err := f.innerConn(t, "api.example.com:443", "other.example.com"); err == nil || !strings.Contains(err.Error(), "unrecognized name") {
		t.Errorf("SNI other.example.com: %v", err)
	}
	// Plain HTTP inside the tunnel.
	c := openTunnel(t, f.addr, "api.example.com:443")
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: "+tok+"\r\n\r\n")
	b, _ := io.ReadAll(c)
	if strings.Contains(string(b), "HTTP/1.1 200") {
		t.Errorf("plain HTTP in the tunnel: %q", b)
	}
	f.none(t)
	if d := f.denied.String(); !strings.Contains(d, "the Host header \"other.example.com\" does not name api.example.com:443") {
		t.Errorf("denial lines:\n%s", d)
	}
}

// TestSecretUpstreamVerified: a server the host's trust store does not
// vouch for gets no request; the client gets a 502 saying why.
func TestSecretUpstreamVerified(t *testing.T) {
	f := newSecretFixture(t)
	f.proxy.roots = x509.NewCertPool() // the test CA is no longer trusted
	tok := f.secrets.Env()["TOKEN"]
	status, body := f.do(t, "GET", "https://api.example.com/", map[string]string{"Authorization": tok})
	if status != 502 || !strings.Contains(body, "failed TLS verification") {
		t.Errorf("%d %q", status, body)
	}
	f.none(t)
}

// TestSecretCAConstrained: the run's CA cannot vouch for a host without a
// secret: its name constraints stop a certificate it signed for another.
func TestSecretCAConstrained(t *testing.T) {
	f := newSecretFixture(t)
	a := f.secrets.ca
	pool := x509.NewCertPool()
	pool.AddCert(a.cert)
	for _, tt := range []struct {
		host string
		ok   bool
	}{{"api.example.com", true}, {"other.example.com", false}, {"127.0.0.1", false}} {
		tg, _ := parseTarget(tt.host, 443)
		leaf, err := a.leaf(tg)
		if err != nil {
			t.Fatal(err)
		}
		cert, _ := x509.ParseCertificate(leaf.Certificate[0])
		_, err = cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: tt.host})
		if (err == nil) != tt.ok {
			t.Errorf("%s: verify error %v, want ok %v", tt.host, err, tt.ok)
		}
	}
	if a.cert.PublicKeyAlgorithm != x509.ECDSA || a.cert.NotAfter.Sub(a.cert.NotBefore) > 25*time.Hour {
		t.Errorf("CA %v valid %v", a.cert.PublicKeyAlgorithm, a.cert.NotAfter.Sub(a.cert.NotBefore))
	}
}

func TestSecretHostMustBeAllowed(t *testing.T) {
	s, _ := ParseSecret("TOKEN@api.example.com")
	s.Value = "v"
	secrets, err := NewSecrets([]Secret{s})
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := NewPolicy([]string{"other.example.com"}, nil)
	_, err = New(Config{Policy: pol, Secrets: secrets})
	if err == nil || !strings.Contains(err.Error(), "add --allow-host api.example.com:443") {
		t.Errorf("New: %v", err)
	}
}

func TestParseSecret(t *testing.T) {
	tests := []struct {
		spec string
		want Secret
		err  string
	}{
		{"TOKEN@api.example.com", Secret{Name: "TOKEN", Host: "api.example.com", Port: 443}, ""},
		{"T_1@API.Example.com.:8443", Secret{Name: "T_1", Host: "api.example.com", Port: 8443}, ""},
		{"K@api.example.com,url", Secret{Name: "K", Host: "api.example.com", Port: 443, InURL: true}, ""},
		{"K@api.example.com,file=/run/a,b", Secret{Name: "K", Host: "api.example.com", Port: 443, File: "/run/a,b"}, ""},
		{"K@api.example.com,url,file=/x", Secret{Name: "K", Host: "api.example.com", Port: 443, InURL: true, File: "/x"}, ""},
		{"K@127.0.0.1:9443", Secret{Name: "K", Host: "127.0.0.1", Port: 9443}, ""},
		{"K@[::1]:9443", Secret{Name: "K", Host: "::1", Port: 9443}, ""},
		{"K@api.example.com,any-header", Secret{Name: "K", Host: "api.example.com", Port: 443, AnyHeader: true}, ""},
		{"K@api.example.com,header=X-Token,header=Cookie,file=/x", Secret{Name: "K", Host: "api.example.com", Port: 443, Headers: []string{"x-token", "cookie"}, File: "/x"}, ""},
		{"T@api.example.com,header=Authorization", Secret{}, "credential header"},
		{"T@api.example.com,header=X-A,header=x-a", Secret{}, "once each"},
		{"T@api.example.com,header=X:A", Secret{}, "header name"},
		{"T@api.example.com,header=", Secret{}, "header name"},
		{"T@api.example.com,any-header,any-header", Secret{}, "unknown option"},
		{"TOKEN", Secret{}, "want NAME@HOST"},
		{"@api.example.com", Secret{}, "want 1 to"},
		{"1T@api.example.com", Secret{}, "want letters"},
		{"T-X@api.example.com", Secret{}, "want letters"},
		{"T@*.example.com", Secret{}, "wildcard"},
		{"T@", Secret{}, "host"},
		{"T@api.example.com:0", Secret{}, "host"},
		{"T@api.example.com,body", Secret{}, "unknown option"},
		{"T@api.example.com,url,url", Secret{}, "unknown option"},
		{"T@api.example.com,file=", Secret{}, "file="},
		{"T@a@b", Secret{}, "host"},
	}
	for _, tt := range tests {
		got, err := ParseSecret(tt.spec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: %+v, %v; want %+v", tt.spec, got, err, tt.want)
		}
	}
}

func TestNewSecretsRefuses(t *testing.T) {
	ok := Secret{Name: "A", Host: "api.example.com", Port: 443, Value: "v"}
	for _, tt := range []struct {
		list []Secret
		err  string
	}{
		{nil, "no secrets"},
		{[]Secret{ok, ok}, "named twice"},
		{[]Secret{{Name: "A", Host: "api.example.com", Port: 443}}, "empty value"},
		{[]Secret{{Name: "A", Host: "api.example.com", Port: 443, Value: "a\r\nX-Evil: 1"}}, "control character"},
		{[]Secret{{Name: "A", Host: "api.example.com", Port: 443, Value: strings.Repeat("v", maxSecretValue+1)}}, "longer than"},
		{[]Secret{{Name: "A", Host: "api..example.com", Port: 443, Value: "v"}}, "secret A"},
	} {
		if _, err := NewSecrets(tt.list); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%+v: %v, want %q", tt.list, err, tt.err)
		}
	}
}

// TestSecretCurl: curl, trusting the run's CA, sends an injected bearer
// token through the proxy; the server sees the value, curl's command
// line and environment only the placeholder.
func TestSecretCurl(t *testing.T) {
	curl := lookTool(t, "curl")
	f := newSecretFixture(t)
	dir := t.TempDir()
	bundle := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(bundle, append(f.secrets.CACertPEM(), f.ca.PEM...), 0o644); err != nil {
		t.Fatal(err)
	}
	tok := f.secrets.Env()["TOKEN"]
	out, err := runTool(t, curl, []string{"CURL_CA_BUNDLE=" + bundle, "HTTPS_PROXY=http://" + f.addr},
		"-sS", "--max-time", "10", "-H", "Authorization: Bearer "+tok, "https://api.example.com/curl")
	if err != nil || out != "hello from api.example.com /curl" {
		t.Fatalf("curl: %v\n%s", err, out)
	}
	s := f.next(t)
	if s.auth != "Bearer "+testSecretValue {
		t.Errorf("server saw %q", s.auth)
	}
}

// lookTool returns the path of a client program, skipping the test when
// it is missing (failing it under CI=true, where .ci/run installs it).
func lookTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not installed (CI installs it)", name)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

// runTool runs a client with only env (and a PATH) in its environment and
// returns its combined output.
func runTool(t testing.TB, prog string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestErrInjectedTooLargeText checks the refusal built without fmt names
// the limit as the format it replaces did.
func TestErrInjectedTooLargeText(t *testing.T) {
	want := fmt.Sprintf("the request holds more placeholders than the proxy replaces: their values would add more than %d KiB", maxInjectedGrowth>>10)
	if got := errInjectedTooLarge.Error(); got != want {
		t.Errorf("errInjectedTooLarge = %q; want %q", got, want)
	}
}
