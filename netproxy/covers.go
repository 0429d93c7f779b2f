package netproxy

import "strings"

// Covers reports whether p matches every host and port that q matches, so
// that a request for q is met by a grant of p, and whose request rules
// permit every request q's do (a grant without rules permits all). Policy files use it to check
// a skill's requested hosts against the operator's grants before a run.
func (p Pattern) Covers(q Pattern) bool {
	if !p.coversPorts(q) || !p.rules.covers(q.rules) {
		return false
	}
	if p.addr.IsValid() || q.addr.IsValid() {
		return p.addr.IsValid() && q.addr.IsValid() && p.addr == q.addr
	}
	if p.host == "" || q.host == "" {
		return false
	}
	if !p.wildcard {
		return !q.wildcard && q.host == p.host
	}
	// "*.a.com" covers "x.a.com", "*.x.a.com", and "*.a.com" itself.
	return strings.HasSuffix(q.host, "."+p.host) || q.wildcard && q.host == p.host
}

// coversPorts reports whether p allows every port q allows: the same
// explicit port, or q's default ports when p has none.
func (p Pattern) coversPorts(q Pattern) bool {
	switch {
	case p.port == q.port:
		return true
	case p.port == 0:
		return q.port == defaultPorts[0] || q.port == defaultPorts[1]
	}
	return false
}

// Denies reports whether p, as a deny entry, refuses every host and port
// that q matches: as Covers, except that p without ":PORT" covers every
// port (a denied host is kept out on all of them).
func (p Pattern) Denies(q Pattern) bool {
	if p.port == 0 {
		p.port = q.port
	}
	return p.Covers(q)
}
