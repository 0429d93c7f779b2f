package netproxy

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Limits of an injected secret.
const (
	maxSecretValue = 16 << 10 // bytes of a secret's value
	maxSecretName  = 128      // bytes of its variable name
	maxSecretSpec  = 4 << 10  // bytes of a whole --secret spec
)

// maxSecretHeaders bounds the header= options of one secret.
const maxSecretHeaders = 16

// CredentialHeaders are the headers a secret's placeholder is replaced in
// by default (lower case): those that carry credentials in common APIs,
// and that servers do not echo back. Proxy-Authorization is listed for
// completeness; the proxy never sends it on.
func CredentialHeaders() []string {
	return []string{
		"authorization", "proxy-authorization",
		"x-api-key", "api-key", "x-auth-token", "x-access-token",
		"private-token",             // GitLab
		"x-goog-api-key",            // Google
		"ocp-apim-subscription-key", // Azure API Management
	}
}

// isCredentialHeader reports whether the lower-case name is one of
// CredentialHeaders.
func isCredentialHeader(name string) bool {
	return slices.Contains(CredentialHeaders(), name)
}

// placeholderPrefix starts every placeholder, so that one is easy to
// recognise in a log; the 32 random bytes after it are what make it
// unguessable and meaningless anywhere but in this run's proxy.
const placeholderPrefix = "SKILL_SANDBOX_SECRET_"

// Secret is one credential the proxy injects: inside the run the variable
// Name holds a random placeholder, and the proxy replaces that placeholder
// with Value in requests to Host on Port, over TLS it terminates, and in
// no other request.
type Secret struct {
	// Name is the environment variable that holds the placeholder inside
	// the run (and, by default, the value in the caller's environment).
	Name string
	// Host is the host name or IP address the value may be sent to, in
	// normalized form (lower case, no trailing dot).
	Host string
	// Port is the port of Host (443 unless the spec named another).
	Port int
	// InURL also replaces the placeholder in the request target (path and
	// query), percent-encoded; by default only credential headers are.
	InURL bool
	// Headers are more header names (lower case) whose values get the
	// value, besides CredentialHeaders.
	Headers []string
	// AnyHeader replaces the placeholder in every header the proxy sends
	// on, not only the credential headers: a server that reflects one
	// of them in its body hands the value back (docs/secrets.md).
	AnyHeader bool
	// File, when set, is the file the value is read from instead of the
	// caller's environment variable Name (see ParseSecret).
	File string
	// Value is the secret itself. ParseSecret leaves it empty: the caller
	// fills it from the environment or File.
	Value string
}

// ParseSecret parses a --secret spec:
//
//	NAME@HOST[:PORT][,url][,any-header][,header=NAME]...[,file=PATH]
//
// NAME is an environment variable name ([A-Za-z_][A-Za-z0-9_]*), HOST a
// host name or IP address (no wildcard: the value goes to one host), PORT
// 443 by default. The placeholder is replaced in the credential headers
// (CredentialHeaders) only, unless options say more: "header=NAME" adds
// a header (repeatable), "any-header" takes every header, "url" the
// request target too; "file=PATH" reads the value from PATH instead of
// the caller's variable NAME, and being last it takes the rest of the
// spec (a path may hold commas).
func ParseSecret(spec string) (Secret, error) {
	var s Secret
	if len(spec) > maxSecretSpec {
		return s, fmt.Errorf("secret spec longer than %d bytes", maxSecretSpec)
	}
	name, rest, ok := strings.Cut(spec, "@")
	if !ok {
		return s, fmt.Errorf("secret %q: want NAME@HOST[:PORT]", truncateForError(spec))
	}
	if err := checkSecretName(name); err != nil {
		return s, err
	}
	s.Name = name
	hostport, opts, _ := strings.Cut(rest, ",")
	for opts != "" {
		var opt string
		if strings.HasPrefix(opts, "file=") {
			opt, opts = opts, ""
		} else {
			opt, opts, _ = strings.Cut(opts, ",")
		}
		switch {
		case opt == "url" && !s.InURL:
			s.InURL = true
		case opt == "any-header" && !s.AnyHeader:
			s.AnyHeader = true
		case strings.HasPrefix(opt, "header="):
			h := strings.ToLower(strings.TrimPrefix(opt, "header="))
			if !isToken(h) || slices.Contains(s.Headers, h) || isCredentialHeader(h) || len(s.Headers) >= maxSecretHeaders {
				return s, fmt.Errorf("secret %s: header=%q: want a header name, not a credential header already covered, once each, at most %d", name, truncateForError(h), maxSecretHeaders)
			}
			s.Headers = append(s.Headers, h)
		case strings.HasPrefix(opt, "file="):
			s.File = strings.TrimPrefix(opt, "file=")
			if s.File == "" || strings.ContainsRune(s.File, 0) {
				return s, fmt.Errorf("secret %s: empty or invalid file= path", name)
			}
		default:
			return s, fmt.Errorf("secret %s: unknown option %q (want url, any-header, header=NAME or file=PATH)", name, truncateForError(opt))
		}
	}
	if strings.HasPrefix(hostport, "*") {
		return s, fmt.Errorf("secret %s: a wildcard host is refused: the value goes to one named host", name)
	}
	t, err := parseTarget(hostport, tlsPort)
	if err != nil {
		return s, fmt.Errorf("secret %s: host %q: %v", name, truncateForError(hostport), err)
	}
	s.Host, s.Port = t.hostname(), t.port
	return s, nil
}

// String formats s as a spec ParseSecret reads back (without its value).
func (s Secret) String() string {
	out := s.Name + "@" + s.Host
	if strings.Contains(s.Host, ":") {
		out = s.Name + "@[" + s.Host + "]"
	}
	if s.Port != tlsPort {
		out += ":" + strconv.Itoa(s.Port)
	}
	if s.InURL {
		out += ",url"
	}
	if s.AnyHeader {
		out += ",any-header"
	}
	for _, h := range s.Headers {
		out += ",header=" + h
	}
	if s.File != "" {
		out += ",file=" + s.File
	}
	return out
}

// checkSecretName refuses a variable name that is not a plain portable
// environment variable name.
func checkSecretName(name string) error {
	if name == "" || len(name) > maxSecretName {
		return fmt.Errorf("secret name %q: want 1 to %d characters", truncateForError(name), maxSecretName)
	}
	for i, c := range []byte(name) {
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return fmt.Errorf("secret name %q: want letters, digits and _ (not first a digit)", truncateForError(name))
	}
	return nil
}

// checkSecretValue refuses a value that cannot travel in a header: empty,
// too long, or holding control characters (a CR or LF would let the value
// add headers of its own).
func checkSecretValue(name, v string) error {
	if v == "" {
		return fmt.Errorf("secret %s: empty value", name)
	}
	if len(v) > maxSecretValue {
		return fmt.Errorf("secret %s: value longer than %d bytes", name, maxSecretValue)
	}
	for _, c := range []byte(v) {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("secret %s: the value holds a control character (a file's trailing newline is dropped; others are refused)", name)
		}
	}
	return nil
}

// secretEntry is a Secret with its placeholder.
type secretEntry struct {
	Secret
	placeholder string
	t           target
}

// Secrets is the set of secrets of one run, with the certificate
// authority that signs the proxy's certificates for their hosts. Its
// private keys exist only in this process's memory.
type Secrets struct {
	list []secretEntry
	ca   *authority
}

// NewSecrets checks list, gives each secret a fresh random placeholder
// and makes a certificate authority for the secrets' hosts. A name may
// appear once; every value must pass the checks of a header value.
func NewSecrets(list []Secret) (*Secrets, error) {
	if len(list) == 0 {
		return nil, errors.New("no secrets")
	}
	s := &Secrets{}
	seen := map[string]bool{}
	var hosts []target
	for _, sec := range list {
		if err := checkSecretName(sec.Name); err != nil {
			return nil, err
		}
		if seen[sec.Name] {
			return nil, fmt.Errorf("secret %s named twice", sec.Name)
		}
		seen[sec.Name] = true
		if err := checkSecretValue(sec.Name, sec.Value); err != nil {
			return nil, err
		}
		t, err := parseTarget(net2hostport(sec.Host, sec.Port), 0)
		if err != nil {
			return nil, fmt.Errorf("secret %s: %v", sec.Name, err)
		}
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		s.list = append(s.list, secretEntry{Secret: sec, placeholder: placeholderPrefix + hex.EncodeToString(b[:]), t: t})
		hosts = append(hosts, t)
	}
	ca, err := newAuthority(hosts)
	if err != nil {
		return nil, err
	}
	s.ca = ca
	return s, nil
}

// net2hostport joins a host (name or IP) and a port for parseTarget.
func net2hostport(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// Env returns the variables the run gets: each secret's name and its
// placeholder.
func (s *Secrets) Env() map[string]string {
	m := make(map[string]string, len(s.list))
	for _, e := range s.list {
		m[e.Name] = e.placeholder
	}
	return m
}

// CACertPEM returns the PEM certificate of the run's authority, which
// clients inside the run must trust for the secrets' hosts.
func (s *Secrets) CACertPEM() []byte { return s.ca.certPEM }

// Targets returns "NAME HOST:PORT" for each secret, sorted by name: what
// a record may say about them (never a value or a placeholder).
func (s *Secrets) Targets() []string {
	var out []string
	for _, e := range s.list {
		out = append(out, e.Name+" "+e.t.String())
	}
	sort.Strings(out)
	return out
}

// covers reports whether a tunnel to t is terminated: a secret names it.
func (s *Secrets) covers(t target) bool {
	if s == nil {
		return false
	}
	for _, e := range s.list {
		if e.t == t {
			return true
		}
	}
	return false
}

// maxInjectedGrowth bounds the bytes the secrets' values may add to one
// request: a head of MaxHeaderBytes full of placeholders (188 of them in
// 16 KiB) would otherwise make the proxy build a head of megabytes for
// each request (3 MiB with a 16 KiB value). It allows a few copies of
// the largest value.
const maxInjectedGrowth = 4 * maxSecretValue

// errInjectedTooLarge refuses a request that holds more placeholders than
// maxInjectedGrowth lets the proxy replace.
// Built without fmt: this runs at every start of every command, and fmt's
// first use costs fresh pages in a process that may not use it again.
var errInjectedTooLarge = errors.New("the request holds more placeholders than the proxy replaces: their values would add more than " + strconv.Itoa(maxInjectedGrowth>>10) + " KiB")

// growth is what the replacements of one request may still add, in bytes.
type growth int

// take counts n more bytes, and reports whether they fit.
func (g *growth) take(n int) bool {
	if n > int(*g) {
		return false
	}
	if n > 0 {
		*g -= growth(n)
	}
	return true
}

// inject replaces the placeholders of the secrets for t in the header
// values the proxy sends on (in a Basic authorization's decoded
// credentials too) and, for secrets that allow it, in the path. It
// returns the names of the secrets it injected, sorted, or
// errInjectedTooLarge before replacing what would exceed
// maxInjectedGrowth.
func (s *Secrets) inject(r *request, t target) ([]string, error) {
	var used []string
	drop := r.dropped()
	left := growth(maxInjectedGrowth)
	for _, e := range s.list {
		if e.t != t {
			continue
		}
		hit := false
		for i := range r.headers {
			n := strings.ToLower(r.headers[i].name)
			if drop[n] {
				continue // never sent on (Host is the tunnel's own)
			}
			if !e.AnyHeader && !isCredentialHeader(n) && !slices.Contains(e.Headers, n) {
				continue // a header a server may reflect: the placeholder stays
			}
			v, ok, err := replaceInHeader(r.headers[i].name, r.headers[i].value, e.placeholder, e.Value, &left)
			if err != nil {
				return nil, err
			}
			if ok {
				r.headers[i].value, hit = v, true
			}
		}
		if n := strings.Count(r.path, e.placeholder); e.InURL && n > 0 {
			esc := url.QueryEscape(e.Value)
			if !left.take(n * (len(esc) - len(e.placeholder))) {
				return nil, errInjectedTooLarge
			}
			r.path = strings.ReplaceAll(r.path, e.placeholder, esc)
			hit = true
		}
		if hit {
			used = append(used, e.Name)
		}
	}
	sort.Strings(used)
	return used, nil
}

// replaceInHeader replaces ph by value in one header value, taking the
// bytes it adds from left. In an Authorization value "Basic CREDENTIALS"
// (what git and curl send for a URL's user:password) the base64
// credentials are decoded, replaced and encoded again.
func replaceInHeader(name, v, ph, value string, left *growth) (string, bool, error) {
	if n := strings.Count(v, ph); n > 0 {
		if !left.take(n * (len(value) - len(ph))) {
			return v, false, errInjectedTooLarge
		}
		return strings.ReplaceAll(v, ph, value), true, nil
	}
	if !strings.EqualFold(name, "Authorization") {
		return v, false, nil
	}
	scheme, cred, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return v, false, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	n := strings.Count(string(raw), ph)
	if err != nil || n == 0 {
		return v, false, nil
	}
	if !left.take(base64.StdEncoding.EncodedLen(len(raw)+n*(len(value)-len(ph))) - len(cred)) {
		return v, false, errInjectedTooLarge
	}
	return scheme + " " + base64.StdEncoding.EncodeToString([]byte(strings.ReplaceAll(string(raw), ph, value))), true, nil
}
