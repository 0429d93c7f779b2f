package sign

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// maxAllowedSigners bounds an allowed_signers file.
const maxAllowedSigners = 1 << 20

// AllowedSigner is one line of an OpenSSH allowed_signers file (see
// ssh-keygen(1), ALLOWED SIGNERS).
type AllowedSigner struct {
	// Line is the 1-based line number in the file.
	Line int
	// Principals is the principals field, a comma-separated pattern-list
	// (quotes removed), e.g. "alice@example.com,*@ops.example.com".
	Principals string
	// Namespaces is the namespaces="..." option, a pattern-list; "" when
	// absent, which accepts every namespace.
	Namespaces string
	// ValidAfter and ValidBefore are the valid-after and valid-before
	// options; zero when absent.
	ValidAfter, ValidBefore time.Time
	// Key is the trusted public key.
	Key *PublicKey
}

// AllowedSigners is a parsed allowed_signers file.
type AllowedSigners []AllowedSigner

// ParseAllowedSigners parses an allowed_signers file: per line, principals
// (one field, or a double-quoted string that may hold spaces), optional
// comma-separated options (namespaces="...", valid-after="...",
// valid-before="...", keywords case-insensitive), a key type, the base64
// key and an optional comment. Empty lines and lines starting with '#' are
// ignored. Timestamps are YYYYMMDD[Z] or YYYYMMDDHHMM[SS][Z], in loc unless
// suffixed with Z (UTC); ssh-keygen uses the local time zone, time.Local.
//
// Refused with an error naming the line: cert-authority (certificate
// signers are not supported), unknown options, unsupported key types and
// anything malformed. An error rather than a skipped line keeps a typo from
// silently dropping a signer or, worse, its restrictions.
func ParseAllowedSigners(data []byte, loc *time.Location) (AllowedSigners, error) {
	if len(data) > maxAllowedSigners {
		return nil, fmt.Errorf("allowed signers: more than %d bytes", maxAllowedSigners)
	}
	var out AllowedSigners
	for i, line := range bytes.Split(data, []byte("\n")) {
		s := strings.TrimRight(string(line), "\r")
		s = strings.TrimLeft(s, " \t")
		if s == "" || s[0] == '#' {
			continue
		}
		a, err := parseSignerLine(s, loc)
		if err != nil {
			return nil, fmt.Errorf("allowed signers: line %d: %w", i+1, err)
		}
		a.Line = i + 1
		out = append(out, *a)
	}
	return out, nil
}

// parseSignerLine parses one non-comment line.
func parseSignerLine(s string, loc *time.Location) (*AllowedSigner, error) {
	a := &AllowedSigner{}
	var rest string
	if s[0] == '"' {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return nil, errors.New("unterminated quoted principals")
		}
		a.Principals, rest = s[1:1+end], s[2+end:]
		if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			return nil, errors.New("no space after the quoted principals")
		}
	} else {
		a.Principals, rest = cutField(s)
	}
	if a.Principals == "" {
		return nil, errors.New("empty principals")
	}
	rest = strings.TrimLeft(rest, " \t")
	if rest == "" {
		return nil, errors.New("no key after the principals")
	}
	// The field after the principals is either a key type or options,
	// as in sshd's authorized_keys.
	if first, _ := cutField(rest); !isKeyTypeName(first) {
		opts, after, err := cutOptions(rest)
		if err != nil {
			return nil, err
		}
		if err := a.setOptions(opts, loc); err != nil {
			return nil, err
		}
		rest = strings.TrimLeft(after, " \t")
	}
	typ, rest := cutField(rest)
	b64, _ := cutField(strings.TrimLeft(rest, " \t"))
	if typ == "" || b64 == "" {
		return nil, errors.New("want a key type and a base64 key")
	}
	blob, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("key: base64: %w", err)
	}
	key, err := ParsePublicKey(blob)
	if err != nil {
		return nil, err
	}
	if key.Type != typ {
		return nil, fmt.Errorf("key type field %q, but the key is %s", typ, key.Type)
	}
	a.Key = key
	return a, nil
}

// isKeyTypeName reports whether s looks like an SSH key type name rather
// than options: options contain '=' or are a known keyword.
func isKeyTypeName(s string) bool {
	return strings.HasPrefix(s, "ssh-") || strings.HasPrefix(s, "ecdsa-") || strings.HasPrefix(s, "sk-") ||
		strings.HasSuffix(s, "@openssh.com")
}

// cutField splits s at the first space or tab.
func cutField(s string) (string, string) {
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// cutOptions splits off the options field: up to the first space or tab
// outside double quotes.
func cutOptions(s string) (string, string, error) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case (s[i] == ' ' || s[i] == '\t') && !quoted:
			return s[:i], s[i:], nil
		}
	}
	if quoted {
		return "", "", errors.New("unterminated quote in options")
	}
	return s, "", nil
}

// setOptions applies a comma-separated options field.
func (a *AllowedSigner) setOptions(opts string, loc *time.Location) error {
	seen := map[string]bool{}
	for opts != "" {
		name, value, hasValue, rest, err := cutOption(opts)
		if err != nil {
			return err
		}
		opts = rest
		lname := strings.ToLower(name)
		if seen[lname] {
			return fmt.Errorf("option %s given twice", name)
		}
		seen[lname] = true
		switch lname {
		case "cert-authority":
			return errors.New("cert-authority: certificate signers are not supported; list the signing keys themselves")
		case "namespaces", "valid-after", "valid-before":
			if !hasValue {
				return fmt.Errorf("option %s needs a double-quoted value", name)
			}
		default:
			return fmt.Errorf("unsupported option %q (supported: namespaces, valid-after, valid-before)", name)
		}
		switch lname {
		case "namespaces":
			if value == "" {
				return errors.New("empty namespaces option")
			}
			a.Namespaces = value
		case "valid-after", "valid-before":
			t, err := parseTimestamp(value, loc)
			if err != nil {
				return fmt.Errorf("option %s: %w", name, err)
			}
			if lname == "valid-after" {
				a.ValidAfter = t
			} else {
				a.ValidBefore = t
			}
		}
	}
	if !a.ValidAfter.IsZero() && !a.ValidBefore.IsZero() && a.ValidBefore.Before(a.ValidAfter) {
		return errors.New("valid-before is earlier than valid-after")
	}
	return nil
}

// cutOption splits the first option off a comma-separated list: name,
// and for name="value" the value without quotes.
func cutOption(s string) (name, value string, hasValue bool, rest string, err error) {
	i := strings.IndexAny(s, ",=")
	if i < 0 {
		return s, "", false, "", nil
	}
	name = s[:i]
	if name == "" {
		return "", "", false, "", errors.New("empty option")
	}
	if s[i] == ',' {
		if i == len(s)-1 {
			return "", "", false, "", errors.New("trailing comma in options")
		}
		return name, "", false, s[i+1:], nil
	}
	v := s[i+1:]
	if !strings.HasPrefix(v, `"`) {
		return "", "", false, "", fmt.Errorf("option %s: value must be double-quoted", name)
	}
	end := strings.IndexByte(v[1:], '"')
	if end < 0 {
		return "", "", false, "", fmt.Errorf("option %s: unterminated quote", name)
	}
	value, rest = v[1:1+end], v[2+end:]
	switch {
	case rest == "":
	case rest[0] == ',' && len(rest) > 1:
		rest = rest[1:]
	default:
		return "", "", false, "", fmt.Errorf("option %s: junk after the quoted value", name)
	}
	return name, value, true, rest, nil
}

// parseTimestamp parses YYYYMMDD[Z] or YYYYMMDDHHMM[SS][Z].
func parseTimestamp(s string, loc *time.Location) (time.Time, error) {
	v, utc := strings.CutSuffix(s, "Z")
	if utc {
		loc = time.UTC
	}
	if loc == nil {
		loc = time.Local
	}
	var layout string
	switch len(v) {
	case 8:
		layout = "20060102"
	case 12:
		layout = "200601021504"
	case 14:
		layout = "20060102150405"
	default:
		return time.Time{}, fmt.Errorf("timestamp %q: want YYYYMMDD[Z] or YYYYMMDDHHMM[SS][Z]", s)
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return time.Time{}, fmt.Errorf("timestamp %q: not all digits", s)
		}
	}
	t, err := time.ParseInLocation(layout, v, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q: %w", s, err)
	}
	return t, nil
}

// MatchPatternList reports whether s matches the comma-separated
// pattern-list of ssh_config(5) PATTERNS: '*' matches any run of
// characters, '?' one character, and a pattern prefixed with '!' is a
// negation: if a negated pattern matches, the list does not, whatever else
// matches. Matching is case-sensitive, as for principals in ssh-keygen.
func MatchPatternList(s, list string) bool {
	matched := false
	for _, p := range strings.Split(list, ",") {
		neg := strings.HasPrefix(p, "!")
		if neg {
			p = p[1:]
		}
		if matchPattern(s, p) {
			if neg {
				return false
			}
			matched = true
		}
	}
	return matched
}

// matchPattern matches s against one wildcard pattern, iteratively with
// one backtrack point, so the time is O(len(s)*len(p)) at worst.
func matchPattern(s, p string) bool {
	si, pi := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			si++
			pi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
