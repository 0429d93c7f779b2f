package netproxy

import (
	"errors"
	"fmt"
	"strings"
)

// Limits of an allow entry's request rules.
const (
	maxRuleMethods  = 16
	maxRulePrefixes = 32
)

// rules are the request rules of an allow entry: the methods and path
// prefixes a request to its hosts may use. A zero rules permits every
// request.
type rules struct {
	methods  []string // nil: any method
	prefixes []string // nil: any path
}

// set reports whether r restricts anything.
func (r rules) set() bool { return r.methods != nil || r.prefixes != nil }

// parseRules parses the words after an allow entry's host pattern:
//
//	METHODS [PREFIX...]
//
// METHODS is a comma-separated list of HTTP method tokens (case-
// sensitive, as methods are) or "*" for any; each PREFIX starts with "/"
// and holds no dot segment, percent sign, backslash or query, so that a
// path compares as the server will read it.
func parseRules(words []string) (rules, error) {
	var r rules
	if len(words) == 0 {
		return r, nil
	}
	if words[0] != "*" {
		for _, m := range strings.Split(words[0], ",") {
			if m == "" || strings.Trim(m, "ABCDEFGHIJKLMNOPQRSTUVWXYZ-_") != "" {
				return r, fmt.Errorf("request rule: method %q: want upper-case letters (GET, POST, ...) or * for any", truncateForError(m))
			}
			r.methods = append(r.methods, m)
		}
		if len(r.methods) > maxRuleMethods {
			return r, fmt.Errorf("request rule: more than %d methods", maxRuleMethods)
		}
	}
	for _, p := range words[1:] {
		if !strings.HasPrefix(p, "/") {
			return r, fmt.Errorf("request rule: path prefix %q does not start with /", truncateForError(p))
		}
		if why := unclearPath(p); why != "" || strings.Contains(p, "%") {
			if why == "" {
				why = "a percent sign"
			}
			return r, fmt.Errorf("request rule: path prefix %q: %s", truncateForError(p), why)
		}
		r.prefixes = append(r.prefixes, p)
	}
	if len(r.prefixes) > maxRulePrefixes {
		return r, fmt.Errorf("request rule: more than %d path prefixes", maxRulePrefixes)
	}
	if r.methods == nil && r.prefixes == nil {
		return r, errors.New("request rule: \"*\" alone restricts nothing; leave the rule out")
	}
	return r, nil
}

// unclearPath says why a path could name something else to the server
// than to a prefix comparison: a dot segment ("/a/../b", "/a/..;x/b"), an encoded dot,
// slash, backslash or percent sign ("%2e", "%2f", "%5c", "%25": a server
// may decode them before routing), a backslash (a separator to some
// servers), an empty segment; "" when the path is clear. Other
// percent-encoded bytes ("%20") are plain characters of a segment. A
// query is not part of the path.
func unclearPath(path string) string {
	lower := strings.ToLower(path)
	switch {
	case strings.Contains(path, `\`):
		return "a backslash"
	case strings.Contains(lower, "%2e") || strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") || strings.Contains(lower, "%25"):
		return "a percent-encoded dot, slash, backslash or percent sign"
	case strings.Contains(path, "//"):
		return "an empty segment (//)"
	}
	for _, seg := range strings.Split(path, "/") {
		// Tomcat, Jetty and Spring drop a segment's ";parameters"
		// before resolving dot segments: "/v1/..;/admin" is /admin.
		seg, _, _ = strings.Cut(seg, ";")
		if seg == "." || seg == ".." {
			return "a dot segment (. or .., with or without ;parameters)"
		}
	}
	return ""
}

// permits reports whether a request with method and target path (with
// its query) passes r, and if not, why.
func (r rules) permits(method, target string) (bool, string) {
	if r.methods != nil && !containsString(r.methods, method) {
		return false, "method " + method + " is not one of " + strings.Join(r.methods, ",")
	}
	if r.prefixes == nil {
		return true, ""
	}
	path, _, _ := strings.Cut(target, "?")
	if why := unclearPath(path); why != "" {
		return false, "the path holds " + why + ", which request rules refuse"
	}
	for _, p := range r.prefixes {
		if strings.HasPrefix(path, p) {
			return true, ""
		}
	}
	return false, "path " + truncateForError(path) + " is under none of " + strings.Join(r.prefixes, " ")
}

// covers reports whether every request q permits, r permits too.
func (r rules) covers(q rules) bool {
	if r.methods != nil {
		if q.methods == nil {
			return false
		}
		for _, m := range q.methods {
			if !containsString(r.methods, m) {
				return false
			}
		}
	}
	if r.prefixes == nil {
		return true
	}
	if q.prefixes == nil {
		return false
	}
	for _, qp := range q.prefixes {
		ok := false
		for _, p := range r.prefixes {
			ok = ok || strings.HasPrefix(qp, p)
		}
		if !ok {
			return false
		}
	}
	return true
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
