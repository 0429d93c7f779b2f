package validate

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxSkillMDSize is the largest SKILL.md accepted, in bytes (1 MiB).
const MaxSkillMDSize = 1 << 20

// maxNesting bounds how deeply YAML collections may nest in the frontmatter.
const maxNesting = 16

// SyntaxError is a malformed SKILL.md: missing or unclosed frontmatter, or
// YAML outside the supported subset. Line and Column are 1-based and relative
// to SKILL.md itself (the first frontmatter line is line 2); Column counts
// characters, not bytes.
type SyntaxError struct {
	Line   int
	Column int
	Msg    string
}

// Error formats the error as "line L, column C: message".
func (e *SyntaxError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// NodeKind tells what a frontmatter value is.
type NodeKind int

// The kinds of frontmatter values. Every scalar is a string: YAML's
// yes/no/on/null/123 stay the text they are written as.
const (
	ScalarNode NodeKind = iota + 1
	MapNode
	ListNode
)

// String names the kind as messages use it: "string", "map" or "list".
func (k NodeKind) String() string {
	switch k {
	case ScalarNode:
		return "string"
	case MapNode:
		return "map"
	case ListNode:
		return "list"
	}
	return "unknown"
}

// Node is one frontmatter value with its position in SKILL.md.
type Node struct {
	Kind  NodeKind
	Value string  // ScalarNode: the string value
	Items []*Node // ListNode: the items in order
	Pairs []Pair  // MapNode: the entries in order
	// Flow is true for a list or map written in flow style ("[a, b]",
	// "{k: v}").
	Flow bool
	// Line and Column locate the start of the value; for an empty value,
	// the place right after the key's ':'.
	Line, Column int
}

// Pair is one "key: value" entry of a mapping.
type Pair struct {
	Key          string
	Line, Column int // position of the key
	Value        *Node
}

// Frontmatter is the parsed head of a SKILL.md file.
type Frontmatter struct {
	// Pairs are the top-level fields in the order written.
	Pairs []Pair
	// EndLine is the line of the closing "---".
	EndLine int
	// Body is the Markdown after the closing "---" with "\n" line endings.
	Body string
}

// Lookup returns the top-level field named key.
func (f *Frontmatter) Lookup(key string) (Pair, bool) {
	for _, p := range f.Pairs {
		if p.Key == key {
			return p, true
		}
	}
	return Pair{}, false
}

// ParseFrontmatter parses a whole SKILL.md file: a UTF-8 BOM and LF, CRLF
// or lone CR line endings are accepted, the first line must be "---" and the
// frontmatter ends at the next line that is exactly "---" (or at a YAML
// document end marker "..." before it, followed only by blank lines and
// comments). The frontmatter must be a YAML mapping written in the subset
// real skills use:
//
//   - plain, 'single-quoted' and "double-quoted" scalars (with YAML escapes),
//     over several lines too;
//   - literal (|) and folded (>) block scalars with chomping (-, +) and an
//     explicit indentation indicator;
//   - any nesting of block mappings and block lists (such as a list of
//     mappings under metadata:, "- - a" compact lists), explicit keys
//     ("? key" then ": value") whose key is a scalar, and single-line flow
//     lists ("[a, b]") and flow maps ("{k: v}");
//   - comments.
//
// Anchors, aliases, tags, directives, several documents, keys that are
// collections and duplicate keys are rejected, as are plain scalars that
// start with an indicator YAML 1.2 does not allow there (ns-plain-first:
// %, @, `, ",", "]", "}", and "-", "?", ":" before a space). Control characters are
// rejected in the frontmatter only: the Markdown body is not YAML. Every scalar is a string. Errors are
// *SyntaxError values with the line and column in SKILL.md. Inputs larger
// than MaxSkillMDSize are rejected.
func ParseFrontmatter(data []byte) (*Frontmatter, error) {
	if len(data) > MaxSkillMDSize {
		return nil, &SyntaxError{Line: 1, Msg: fmt.Sprintf("SKILL.md is %d bytes; the limit is %d bytes (1 MiB)", len(data), MaxSkillMDSize)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if err := checkUTF8(data); err != nil {
		return nil, err
	}
	lines, end, body := splitFrontmatter(data)
	if !isDelimiter(lines[0]) {
		return nil, &SyntaxError{Line: 1, Column: 1, Msg: "SKILL.md must start with YAML frontmatter (---)"}
	}
	if end < 0 {
		return nil, &SyntaxError{Line: 1, Column: 1, Msg: "SKILL.md frontmatter not properly closed with ---"}
	}
	// The Markdown body is not YAML: a control character there is no
	// syntax error (validate warns about it).
	if err := checkControl(lines[:end+1]); err != nil {
		return nil, err
	}
	fmEnd, err := documentEnd(lines, end)
	if err != nil {
		return nil, err
	}
	p := &parser{lines: lines[1:fmEnd], first: 2, inlineIdx: -1}
	root, err := p.parseDocument()
	if err != nil {
		return nil, err
	}
	return &Frontmatter{Pairs: root.Pairs, EndLine: end + 1, Body: body}, nil
}

// splitFrontmatter splits data into lines (CRLF, LF and a lone CR all end
// a line, YAML 1.2, 5.4) up to the line that closes a frontmatter opened
// on the first, and returns them with that line's index and the text
// after it (the body, line ends as LF). end is -1 when no line closes the
// frontmatter (or the first line opens none). The body is not split:
// only the frontmatter's lines are needed, and the body is most of the
// file.
func splitFrontmatter(data []byte) (lines []string, end int, body string) {
	text := string(data)
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	}
	for i := 0; ; i++ {
		line, rest, more := strings.Cut(text, "\n")
		lines = append(lines, line)
		switch {
		case i == 0 && !isDelimiter(line):
			return lines, -1, ""
		case i > 0 && isDelimiter(line):
			return lines, i, rest
		case !more:
			return lines, -1, ""
		}
		text = rest
	}
}

// isDelimiter reports whether line is a frontmatter delimiter "---",
// trailing blanks allowed.
func isDelimiter(line string) bool {
	return strings.TrimRight(line, " \t") == "---"
}

// checkUTF8 rejects invalid UTF-8 anywhere in the file.
func checkUTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil // the common case, without counting lines and columns
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return &SyntaxError{Line: line, Column: col, Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02x); SKILL.md must be UTF-8 text", data[i])}
		case r == '\n' || r == '\r' && (i+1 == len(data) || data[i+1] != '\n'):
			line, col = line+1, 0
		}
		i += size
		col++
	}
	return nil
}

// checkControl rejects the control characters YAML forbids in the given
// lines (the frontmatter and its delimiters).
func checkControl(lines []string) error {
	for i, l := range lines {
		if line, col, r, ok := ControlChar(l); ok {
			return &SyntaxError{Line: i + line, Column: col, Msg: fmt.Sprintf("control character %U is not allowed; SKILL.md must be text", r)}
		}
	}
	return nil
}

// ControlChar finds the first control character other than tab, newline
// and carriage return in text (which YAML forbids and a Markdown body
// should not hold) and returns its 1-based line and column, and the
// character.
func ControlChar(text string) (line, col int, r rune, ok bool) {
	// Every such character is one byte (a UTF-8 sequence of several
	// bytes holds none below 0x80), so a walk over bytes tells whether
	// there is one, cheaper than decoding runes and counting columns.
	i := 0
	for ; i < len(text); i++ {
		if b := text[i]; b < 0x20 && b != '\n' && b != '\t' && b != '\r' || b == 0x7f {
			break
		}
	}
	if i == len(text) {
		return 0, 0, 0, false
	}
	line, col = 1, 1
	for _, r := range text {
		switch {
		case r == '\n':
			line, col = line+1, 0
		case r == '\t' || r == '\r':
		case r < 0x20 || r == 0x7f:
			return line, col, r, true
		}
		col++
	}
	return 0, 0, 0, false
}

// documentEnd returns the index, in lines, where the YAML document of the
// frontmatter (which closes at lines[end], "---") ends: at a document end
// marker "..." (YAML 1.2, 9.1.4), if one comes first, else at end. Only
// blank lines and comments may follow the marker: another document is not
// allowed.
func documentEnd(lines []string, end int) (int, error) {
	for i := 1; i < end; i++ {
		if !isDocumentEndMarker(lines[i]) {
			continue
		}
		for j := i + 1; j < end; j++ {
			if !isBlank(lines[j]) {
				return 0, &SyntaxError{Line: j + 1, Column: 1, Msg: "content after the YAML document end marker (...) on line " + fmt.Sprint(i+1) + "; only one document is allowed"}
			}
		}
		return i, nil
	}
	return end, nil
}

// isDocumentEndMarker reports whether line is "...", optionally followed
// by blanks or a comment.
func isDocumentEndMarker(line string) bool {
	rest, ok := strings.CutPrefix(line, "...")
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return false
	}
	return isBlank(rest)
}
