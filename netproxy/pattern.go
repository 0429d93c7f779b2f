package netproxy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Limits of host names, as in RFC 1035.
const (
	maxHostLen  = 253
	maxLabelLen = 63
)

// Pattern is one parsed entry of an allow or deny list. Its zero value
// matches nothing.
//
// The accepted forms are:
//
//	api.example.com          that host, ports 80 and 443
//	api.example.com:8443     that host, port 8443 only
//	*.example.com            every subdomain of example.com (not example.com)
//	*.example.com:8443       the same, port 8443 only
//	203.0.113.7[:PORT]       that IPv4 address (an explicit IP grant)
//	::1, [::1]:8080          that IPv6 address (brackets needed with a port)
//
// An allow entry may add request rules after a space: methods and path
// prefixes a request must use ("api.github.com GET,HEAD /repos/"; see
// docs/network.md). The proxy enforces them where it reads the requests:
// plain HTTP, and the HTTPS tunnels it terminates (the hosts of injected
// secrets); an opaque tunnel to such a host is refused.
//
// In a deny list a pattern without ":PORT" covers every port of its host.
//
// Names are compared case-insensitively, without a trailing dot. Only ASCII
// is accepted: an internationalised name must be written in its punycode
// ("xn--") form, which is also what clients send to a proxy. A name whose
// last label is all digits (127.1, 0x7f.1 and the like) is refused, since
// C resolvers read such names as IPv4 addresses.
type Pattern struct {
	raw      string
	host     string     // lower-case name without "*." and trailing dot
	wildcard bool       // "*.host": strict subdomains only
	addr     netip.Addr // set for an IP grant
	port     int        // 0: the default ports
	rules    rules      // request rules of an allow entry (see parseRules)
}

// defaultPorts are the ports a pattern without ":PORT" allows (read only).
var defaultPorts = [...]int{80, 443}

// ParsePattern parses one allow or deny entry (see Pattern).
func ParsePattern(s string) (Pattern, error) {
	p := Pattern{raw: s}
	if s == "" {
		return p, errors.New("empty host pattern")
	}
	words := strings.Fields(s)
	if len(words) == 0 || strings.TrimSpace(s) != s {
		return p, fmt.Errorf("host pattern %q: empty, or blank space around it", s)
	}
	hp := words[0]
	if len(words) > 1 {
		r, err := parseRules(words[1:])
		if err != nil {
			return p, fmt.Errorf("host pattern %q: %v", s, err)
		}
		p.rules = r
	}
	host, port, err := splitHostPort(hp, false)
	if err != nil {
		return p, fmt.Errorf("host pattern %q: %v", s, err)
	}
	p.port = port
	if strings.HasPrefix(host, "[") || strings.Contains(host, ":") {
		h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		a, err := netip.ParseAddr(h)
		if err != nil || a.Zone() != "" {
			return p, fmt.Errorf("host pattern %q: bad IPv6 address", s)
		}
		p.addr = a.Unmap()
		return p, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		p.addr = a
		return p, nil
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		p.wildcard = true
		host = rest
	}
	name, err := normalizeName(host)
	if err != nil {
		return p, fmt.Errorf("host pattern %q: %v", s, err)
	}
	if p.wildcard && !strings.Contains(name, ".") {
		return p, fmt.Errorf("host pattern %q: a wildcard needs at least two labels after \"*.\"", s)
	}
	p.host = name
	return p, nil
}

// String returns the pattern as it was written.
func (p Pattern) String() string { return p.raw }

// matches reports whether the pattern covers the target. An IP grant
// matches only the same IP literal; a name pattern only names.
func (p Pattern) matches(t target) bool {
	if p.port == 0 {
		if t.port != defaultPorts[0] && t.port != defaultPorts[1] {
			return false
		}
	} else if p.port != t.port {
		return false
	}
	return p.matchesHost(t)
}

// matchesHost is matches without the port.
func (p Pattern) matchesHost(t target) bool {
	if p.addr.IsValid() || t.addr.IsValid() {
		return p.addr.IsValid() && t.addr.IsValid() && p.addr == t.addr
	}
	if p.host == "" {
		return false
	}
	if p.wildcard {
		return strings.HasSuffix(t.host, "."+p.host)
	}
	return t.host == p.host
}

// target is a requested host and port, normalised.
type target struct {
	host string     // lower-case name; empty for an IP literal
	addr netip.Addr // set for an IP literal (unmapped)
	port int
}

// String formats the target as host:port (IPv6 in brackets).
func (t target) String() string {
	if t.addr.IsValid() {
		return netip.AddrPortFrom(t.addr, uint16(t.port)).String()
	}
	return t.host + ":" + strconv.Itoa(t.port)
}

// hostname is the host part without the port.
func (t target) hostname() string {
	if t.addr.IsValid() {
		return t.addr.String()
	}
	return t.host
}

// parseTarget parses a request's "host:port" (CONNECT authority) or, with
// defPort > 0, a "host[:port]" whose port defaults to defPort.
func parseTarget(s string, defPort int) (target, error) {
	var t target
	host, port, err := splitHostPort(s, defPort == 0)
	if err != nil {
		return t, err
	}
	if port == 0 {
		port = defPort
	}
	t.port = port
	if strings.HasPrefix(host, "[") {
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || a.Zone() != "" || !a.Is6() {
			return t, errors.New("bad IPv6 literal")
		}
		t.addr = a.Unmap()
		return t, nil
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
		t.addr = a
		return t, nil
	}
	name, err := normalizeName(host)
	if err != nil {
		return t, err
	}
	t.host = name
	return t, nil
}

// splitHostPort splits "host", "host:port", "[v6]", "[v6]:port" and, for
// patterns, a bare IPv6 address. The port is 0 when absent; needPort
// refuses that.
func splitHostPort(s string, needPort bool) (string, int, error) {
	host, portStr := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, errors.New("missing ']'")
		}
		host = s[:end+1]
		rest := s[end+1:]
		if rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return "", 0, errors.New("junk after ']'")
			}
			portStr = p
			if p == "" {
				return "", 0, errors.New("empty port")
			}
		}
	case strings.Count(s, ":") == 1:
		host, portStr, _ = strings.Cut(s, ":")
		if portStr == "" {
			return "", 0, errors.New("empty port")
		}
	case strings.Count(s, ":") > 1 && needPort:
		return "", 0, errors.New("IPv6 address without brackets")
	}
	if host == "" || host == "[]" {
		return "", 0, errors.New("empty host")
	}
	if portStr == "" {
		if needPort {
			return "", 0, errors.New("missing port")
		}
		return host, 0, nil
	}
	port, err := parsePort(portStr)
	if err != nil {
		return "", 0, err
	}
	return host, port, nil
}

// parsePort accepts 1-65535 in plain decimal digits.
func parsePort(s string) (int, error) {
	if len(s) == 0 || len(s) > 5 {
		return 0, fmt.Errorf("bad port %q", s)
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad port %q", s)
		}
		n = n*10 + int(c-'0')
	}
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %d out of range", n)
	}
	return n, nil
}

// normalizeName lower-cases an ASCII host name, drops one trailing dot and
// checks its syntax: labels of letters, digits, '-' and '_', 1-63 bytes,
// not starting or ending with '-', 253 bytes in all, and a last label that
// is not all digits (which C resolvers would read as an IPv4 address).
func normalizeName(s string) (string, error) {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", errors.New("empty host name")
	}
	if len(s) > maxHostLen {
		return "", errors.New("host name longer than 253 bytes")
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case 'A' <= c && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		case c >= 0x80:
			return "", errors.New("non-ASCII host name (write it in punycode, xn--)")
		default:
			return "", fmt.Errorf("invalid character %q in host name", c)
		}
	}
	name := string(b)
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" {
			return "", errors.New("empty label in host name")
		}
		if len(l) > maxLabelLen {
			return "", errors.New("label longer than 63 bytes in host name")
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "", errors.New("label starts or ends with '-' in host name")
		}
	}
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return "", errors.New("numeric host name (write an IPv4 address as a.b.c.d)")
	}
	return name, nil
}

// Policy is an allow list and a deny list of patterns; deny wins.
type Policy struct {
	Allow []Pattern
	Deny  []Pattern
}

// NewPolicy parses allow and deny entries. Every bad entry is reported.
func NewPolicy(allow, deny []string) (*Policy, error) {
	p := &Policy{}
	var errs []error
	for _, s := range allow {
		pat, err := ParsePattern(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("allow: %w", err))
			continue
		}
		p.Allow = append(p.Allow, pat)
	}
	for _, s := range deny {
		pat, err := ParsePattern(s)
		if err == nil && pat.rules.set() {
			err = fmt.Errorf("host pattern %q: request rules belong in allow entries", s)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("deny: %w", err))
			continue
		}
		p.Deny = append(p.Deny, pat)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// deniedAddr returns the deny pattern that names address a on port (an
// IP pattern; without ":PORT" it covers every port), or "". A name's
// answers are checked against it, so that denying an address keeps out
// every name that resolves to it, not only its IP literal. An IPv6 form
// that leads to an IPv4 address (NAT64, 6to4, Teredo; see embeddedIPv4)
// is denied with that address, as addrBlocked judges it: otherwise a name
// answering 64:ff9b::cb00:7107 would reach a denied 203.0.113.7.
func (p *Policy) deniedAddr(a netip.Addr, port int) string {
	a = a.Unmap()
	v4, _ := embeddedIPv4(a)
	for _, d := range p.Deny {
		if !d.addr.IsValid() || d.port != 0 && d.port != port {
			continue
		}
		if d.addr == a || v4.IsValid() && d.addr == v4 {
			return d.raw
		}
	}
	return ""
}

// Decision is the policy's verdict on one host and port.
type Decision struct {
	Allowed bool
	// Rule is the pattern that decided, prefixed "allow " or "deny ";
	// empty when no pattern matched (denied by default).
	Rule string
	// IPGrant is set when an allow pattern names the IP literal itself:
	// the address checks (loopback, private, ...) are then skipped.
	IPGrant bool
	// Reason explains a denial in words.
	Reason string
	// Remedy says what would allow the request: the flag or the policy
	// key, or that nothing does.
	Remedy string

	// limits are the matching allow entries when every one of them has
	// request rules (a request must pass one); nil when one has none.
	limits []Pattern
}

// permits checks a request's method and target against the request
// rules of the allow entries that matched t: it returns whether one
// permits it and the rule that decided, or why none does and the remedy.
func (d Decision) permits(t target, method, path string) (ok bool, rule, reason, remedy string) {
	if d.limits == nil {
		return true, d.Rule, "", ""
	}
	var whys []string
	for _, a := range d.limits {
		ok, why := a.rules.permits(method, path)
		if ok {
			return true, "allow " + a.raw, "", ""
		}
		whys = append(whys, fmt.Sprintf("%q: %s", a.raw, why))
	}
	p, _, _ := strings.Cut(path, "?")
	reason = fmt.Sprintf("%s %s to %s is outside the request rules: %s", method, truncateForError(p), t, strings.Join(whys, "; "))
	remedy = fmt.Sprintf("--allow-host '%s %s %s', or that entry in [network] allowed_domains of the operator policy (--policy)", grantPattern(t), method, truncateForError(p))
	if unclearPath(p) != "" {
		// No prefix may hold such a path: naming it would be refused.
		remedy = fmt.Sprintf("the path as the server reads it (no dot or empty segment, backslash or encoded separator), or an entry without path prefixes (--allow-host '%s %s')", grantPattern(t), method)
	}
	return false, d.Rule, reason, remedy
}

// Check decides on host:port (host as sent by a client: a name, an IPv4
// literal or a bracketed IPv6 literal).
func (p *Policy) Check(hostport string) (Decision, error) {
	t, err := parseTarget(hostport, 0)
	if err != nil {
		return Decision{}, err
	}
	return p.check(t), nil
}

func (p *Policy) check(t target) Decision {
	if n := metadataName(t.host); n != "" {
		return Decision{Rule: "deny " + n + " (cloud metadata name)", Reason: fmt.Sprintf("%s is a cloud metadata service's name (%s); it is never reached by name", t, n), Remedy: metadataRemedy}
	}
	for _, d := range p.Deny {
		// A deny entry without ":PORT" keeps its host out on every
		// port: deny wins over "*.example.com:8443" too.
		if d.port == 0 && d.matchesHost(t) || d.matches(t) {
			return Decision{Rule: "deny " + d.raw, Reason: fmt.Sprintf("%s is denied by %q", t, d.raw), Remedy: denyRemedy(d.raw)}
		}
	}
	var matched []Pattern
	for _, a := range p.Allow {
		if a.matches(t) {
			if !a.rules.set() {
				return Decision{Allowed: true, Rule: "allow " + a.raw, IPGrant: a.addr.IsValid()}
			}
			matched = append(matched, a)
		}
	}
	if len(matched) > 0 {
		return Decision{Allowed: true, Rule: "allow " + matched[0].raw, IPGrant: matched[0].addr.IsValid(), limits: matched}
	}
	reason := fmt.Sprintf("%s is not in the allow list", t)
	for _, a := range p.Allow {
		if a.matchesHost(t) {
			// The usual slip: a grant without ":PORT" for another port.
			if a.port == 0 {
				return Decision{Reason: fmt.Sprintf("%s: %q allows ports 80 and 443 only (add :PORT for another)", reason, a.raw), Remedy: allowRemedy(t)}
			}
			return Decision{Reason: fmt.Sprintf("%s: %q allows port %d only", reason, a.raw, a.port), Remedy: allowRemedy(t)}
		}
	}
	if t.addr.IsValid() {
		reason = fmt.Sprintf("%s is an IP address; only an allow entry naming that address grants it", t)
	}
	return Decision{Reason: reason, Remedy: allowRemedy(t)}
}
