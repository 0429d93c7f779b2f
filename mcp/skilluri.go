package mcp

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Bounds of a skill:// URI the server reads.
const (
	maxSkillURIBytes    = 4096
	maxSkillURISegments = 64
)

const skillScheme = "skill://"

// skillURI is the URI of the file rel (slash-separated) of the skill name:
// skill://<name>/<rel>, each path segment percent-encoded as needed.
func skillURI(name, rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return skillScheme + url.PathEscape(name) + "/" + strings.Join(segs, "/")
}

// parseSkillURI splits a skill:// URI into the skill's name (the first
// segment: this server's skill paths have one segment, the name) and the
// file's path in the skill folder, slash-separated. Segments are
// percent-decoded; then an empty segment, "." or "..", a "/" or "\" that
// was encoded, a NUL or any other control character, and invalid UTF-8
// are refused, so that the path names a file inside the skill folder and
// only by one spelling. Queries and fragments are refused too.
func parseSkillURI(uri string) (skill, rel string, err error) {
	if len(uri) > maxSkillURIBytes {
		return "", "", fmt.Errorf("the URI is %d bytes, over the limit of %d", len(uri), maxSkillURIBytes)
	}
	rest, ok := strings.CutPrefix(uri, skillScheme)
	if !ok {
		return "", "", errors.New(`not a skill:// URI (skill://<skill>/<path>)`)
	}
	if strings.ContainsAny(rest, "?#") {
		return "", "", errors.New("a skill:// URI has no query or fragment here")
	}
	segs := strings.Split(rest, "/")
	if len(segs) < 2 {
		return "", "", errors.New("the URI names no file: skill://<skill>/<path>, such as skill://<skill>/SKILL.md")
	}
	if len(segs) > maxSkillURISegments {
		return "", "", fmt.Errorf("the URI has more than %d path segments", maxSkillURISegments)
	}
	for i, seg := range segs {
		d, err := url.PathUnescape(seg)
		if err != nil {
			return "", "", fmt.Errorf("segment %d: bad percent-encoding", i+1)
		}
		if msg := badSegment(d); msg != "" {
			return "", "", fmt.Errorf("segment %d: %s", i+1, msg)
		}
		segs[i] = d
	}
	return segs[0], strings.Join(segs[1:], "/"), nil
}

// badSegment says what is wrong with a decoded path segment, or "".
func badSegment(d string) string {
	switch {
	case d == "":
		return "empty (a doubled or trailing \"/\")"
	case d == "." || d == "..":
		return fmt.Sprintf("%q is not allowed", d)
	case !utf8.ValidString(d):
		return "not valid UTF-8"
	case strings.ContainsAny(d, `/\`):
		return "an encoded \"/\" or \"\\\""
	}
	for _, r := range d {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f {
			return "a control character"
		}
	}
	return ""
}
