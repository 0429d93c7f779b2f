package validate

import "strings"

// The three patterns below were regular expressions. They are matched by
// hand because validation runs in every "skill-sandbox run" before the
// script starts, and compiling and first running the expressions cost
// about 0.1 ms of each run. Each function gives exactly what the
// expression named in its comment gives (match_test.go compares them on
// a corpus and in FuzzPatterns). The expressions are deterministic: where
// one of them matches, no other way through it could, so each function
// tries the one way at each candidate position. All the bytes they look
// for are ASCII, which never occurs inside a UTF-8 sequence, so walking
// bytes finds what the expression finds walking runes.

// isSpace reports whether b is in the regular expression class \s: tab,
// newline, form feed, carriage return and space (not vertical tab).
func isSpace(b byte) bool {
	switch b {
	case '\t', '\n', '\f', '\r', ' ':
		return true
	}
	return false
}

// skipSpace returns the index of the first byte at or after i in s that is
// not \s.
func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// findXMLTag returns the leftmost substring of s that looks like an XML or
// HTML tag, or "": the match of </?[A-Za-z][A-Za-z0-9_.:-]*(\s[^<>]*)?/?>
// that regexp.FindString returns.
func findXMLTag(s string) string {
	for p := 0; ; p++ {
		k := strings.IndexByte(s[p:], '<')
		if k < 0 {
			return ""
		}
		p += k
		if end := xmlTagEnd(s, p); end > 0 {
			return s[p:end]
		}
	}
}

// xmlTagEnd returns the end of the tag that starts with the '<' at s[p],
// or -1 if none does.
func xmlTagEnd(s string, p int) int {
	i := p + 1
	if i < len(s) && s[i] == '/' {
		i++
	}
	if i >= len(s) || !isASCIILetter(s[i]) {
		return -1
	}
	for i++; i < len(s) && isTagNameByte(s[i]); i++ {
	}
	if i < len(s) && isSpace(s[i]) {
		// (\s[^<>]*)?/?> : the tag ends at the first '>' unless a '<'
		// or the end of s comes first (a "/" before it is in [^<>]*).
		if k := strings.IndexAny(s[i:], "<>"); k >= 0 && s[i+k] == '>' {
			return i + k + 1
		}
		return -1
	}
	if i < len(s) && s[i] == '/' {
		i++
	}
	if i < len(s) && s[i] == '>' {
		return i + 1
	}
	return -1
}

func isASCIILetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }

// isTagNameByte reports whether b is in [A-Za-z0-9_.:-].
func isTagNameByte(b byte) bool {
	return isASCIILetter(b) || '0' <= b && b <= '9' || b == '_' || b == '.' || b == ':' || b == '-'
}

// mdLinkTargets returns the byte ranges [start, end) of the targets of the
// Markdown links and images "[text](target)" in line, a target optionally
// in <...> and optionally followed by a "title" or 'title': the first
// submatch of every match of
// \]\(\s*<?([^()<>\s]+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)
// as regexp.FindAllStringSubmatchIndex gives them.
func mdLinkTargets(line string) [][2]int {
	var out [][2]int
	for p := 0; ; {
		k := strings.Index(line[p:], "](")
		if k < 0 {
			return out
		}
		p += k
		start, end, next := mdLinkAt(line, p)
		if next < 0 {
			p++
			continue
		}
		out = append(out, [2]int{start, end})
		p = next
	}
}

// mdLinkAt matches a link's "](target)" at line[p:], which starts with
// "](". It returns the target's range and the end of the match, or next -1
// when there is no match at p.
func mdLinkAt(line string, p int) (start, end, next int) {
	i := skipSpace(line, p+2)
	if i < len(line) && line[i] == '<' {
		i++
	}
	start = i
	for i < len(line) && !isSpace(line[i]) && strings.IndexByte("()<>", line[i]) < 0 {
		i++
	}
	if i == start {
		return 0, 0, -1
	}
	end = i
	if i < len(line) && line[i] == '>' {
		i++
	}
	j := skipSpace(line, i)
	if j > i && j < len(line) && (line[j] == '"' || line[j] == '\'') {
		// A title: once it has started, only its closing quote, white
		// space and ")" can complete the match.
		k := strings.IndexByte(line[j+1:], line[j])
		if k < 0 {
			return 0, 0, -1
		}
		j = skipSpace(line, j+1+k+1)
	}
	if j < len(line) && line[j] == ')' {
		return start, end, j + 1
	}
	return 0, 0, -1
}

// barePathRanges returns the byte ranges [start, end) of the bare paths into
// the skill's scripts/, references/ and assets/ folders in line: the first
// submatch of every match of
// (?:^|[\s`'"(\[]|\./)((?:scripts|references|assets)/[^\s`'"()\[\]<>{}|,;*$]+)
// as regexp.FindAllStringSubmatchIndex gives them.
func barePathRanges(line string) [][2]int {
	var out [][2]int
	for p := 0; p < len(line); {
		// Every path starts with a folder name ending in "s/", so no
		// match begins before the next "s/" less the longest prefix
		// ("references/") and its context ("./"): skip there rather than
		// try each byte of prose.
		k := strings.Index(line[p:], "s/")
		if k < 0 {
			return out
		}
		if skip := k + 2 - len("references/") - len("./"); skip > 0 {
			p += skip
		}
		// The alternatives in the expression's order: the start of the
		// line, one delimiter, "./".
		end := -1
		start := p
		if p == 0 {
			end = barePathEnd(line, p)
		}
		if end < 0 && (isSpace(line[p]) || strings.IndexByte("`'\"([", line[p]) >= 0) {
			start = p + 1
			end = barePathEnd(line, start)
		}
		if end < 0 && strings.HasPrefix(line[p:], "./") {
			start = p + 2
			end = barePathEnd(line, start)
		}
		if end < 0 {
			p++
			continue
		}
		out = append(out, [2]int{start, end})
		p = end
	}
	return out
}

// barePathEnd returns the end of the path that starts at line[i] with
// "scripts/", "references/" or "assets/" and goes on with at least one
// byte that is not \s or one of `'"()[]<>{}|,;*$; else -1.
func barePathEnd(line string, i int) int {
	rest := line[i:]
	var n int
	switch {
	case strings.HasPrefix(rest, "scripts/"):
		n = len("scripts/")
	case strings.HasPrefix(rest, "references/"):
		n = len("references/")
	case strings.HasPrefix(rest, "assets/"):
		n = len("assets/")
	default:
		return -1
	}
	j := i + n
	for j < len(line) && !endsBarePath(line[j]) {
		j++
	}
	if j == i+n {
		return -1
	}
	return j
}

// endsBarePath reports whether b ends a bare path: \s or one of
// `'"()[]<>{}|,;*$.
func endsBarePath(b byte) bool {
	switch b {
	case '\t', '\n', '\f', '\r', ' ', '`', '\'', '"', '(', ')', '[', ']', '<', '>', '{', '}', '|', ',', ';', '*', '$':
		return true
	}
	return false
}
