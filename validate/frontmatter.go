package validate

import (
	"bytes"
	"fmt"
	"strconv"
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

// isDelimiter reports whether line is a frontmatter delimiter "---",
// trailing blanks allowed.
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

// parser reads the frontmatter lines (without delimiters and line endings).
type parser struct {
	lines []string
	first int // SKILL.md line number of lines[0]
	pos   int // index of the next unread line

	// A collection that starts on the line of a list item ("- key: v",
	// "- - a") has its first entry at inlineOff of line inlineIdx, not at
	// that line's indentation; inlineIdx is -1 when there is none.
	inlineIdx, inlineOff int
}

// indentAt is indentOf, except on the line of an inline collection
// (see parser.inlineIdx), where the collection's column counts; that
// happens once.
func (p *parser) indentAt(idx int) (int, error) {
	if idx == p.inlineIdx {
		p.inlineIdx = -1
		return p.inlineOff, nil
	}
	return p.indentOf(idx)
}

func (p *parser) errAt(idx, off int, format string, a ...any) error {
	col := 1
	if idx >= 0 && idx < len(p.lines) {
		l := p.lines[idx]
		if off > len(l) {
			off = len(l)
		}
		col = utf8.RuneCountInString(l[:off]) + 1
	}
	return &SyntaxError{Line: idx + p.first, Column: col, Msg: fmt.Sprintf(format, a...)}
}

func (p *parser) node(kind NodeKind, idx, off int) *Node {
	n := &Node{Kind: kind, Line: idx + p.first, Column: 1}
	if idx < len(p.lines) {
		l := p.lines[idx]
		if off > len(l) {
			off = len(l)
		}
		n.Column = utf8.RuneCountInString(l[:off]) + 1
	}
	return n
}

// indentOf returns the number of leading spaces of line and an error when a
// tab is used for indentation in front of content.
func (p *parser) indentOf(idx int) (int, error) {
	l := p.lines[idx]
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	if n < len(l) && l[n] == '\t' {
		rest := strings.TrimLeft(l[n:], " \t")
		if rest != "" && rest[0] != '#' {
			return n, p.errAt(idx, n, "tab character used for indentation; YAML allows only spaces")
		}
	}
	return n, nil
}

// isBlank reports whether a line holds only whitespace or a comment.
func isBlank(l string) bool {
	t := strings.TrimLeft(l, " \t")
	return t == "" || t[0] == '#'
}

// nextContent returns the index of the next line at or after from that is
// not blank or a comment, or -1.
func (p *parser) nextContent(from int) int {
	for i := from; i < len(p.lines); i++ {
		if !isBlank(p.lines[i]) {
			return i
		}
	}
	return -1
}

func (p *parser) parseDocument() (*Node, error) {
	i := p.nextContent(0)
	if i < 0 {
		return nil, &SyntaxError{Line: p.first, Column: 1, Msg: "SKILL.md frontmatter must be a YAML mapping (it is empty)"}
	}
	ind, err := p.indentOf(i)
	if err != nil {
		return nil, err
	}
	if !p.looksLikeKey(i, ind) && !strings.HasPrefix(p.lines[i][ind:], "?") {
		// Let the key parser explain what is wrong with indicators.
		if _, _, _, kerr := p.parseKey(i, ind); kerr != nil {
			return nil, kerr
		}
		return nil, p.errAt(i, ind, "SKILL.md frontmatter must be a YAML mapping of fields (name: ..., description: ...)")
	}
	root, err := p.parseMap(i, ind, 0)
	if err != nil {
		return nil, err
	}
	if j := p.nextContent(p.pos); j >= 0 {
		jind, err := p.indentOf(j)
		if err != nil {
			return nil, err
		}
		return nil, p.errAt(j, jind, "unexpected content; expected a top-level field at column %d", ind+1)
	}
	return root, nil
}

// parseMap parses a block mapping whose keys sit at column indent, starting
// at line idx.
func (p *parser) parseMap(idx, indent, depth int) (*Node, error) {
	if depth > maxNesting {
		return nil, p.errAt(idx, indent, "nesting deeper than %d levels is not supported", maxNesting)
	}
	m := p.node(MapNode, idx, indent)
	seen := map[string]int{}
	p.pos = idx
	for {
		i := p.nextContent(p.pos)
		if i < 0 {
			p.pos = len(p.lines)
			return m, nil
		}
		ind, err := p.indentAt(i)
		if err != nil {
			return nil, err
		}
		if ind < indent {
			p.pos = i
			return m, nil
		}
		if ind > indent {
			return nil, p.errAt(i, ind, "unexpected indentation (expected column %d)", indent+1)
		}
		var key string
		var keyOff int
		var val *Node
		if isExplicitKey(p.lines[i][ind:]) {
			key, keyOff, val, err = p.explicitEntry(i, ind, depth)
			if err != nil {
				return nil, err
			}
		} else {
			var after int
			key, keyOff, after, err = p.parseKey(i, ind)
			if err != nil {
				return nil, err
			}
			p.pos = i + 1
			if val, err = p.parseValue(i, after, indent, true, depth); err != nil {
				return nil, err
			}
		}
		if first, dup := seen[key]; dup {
			return nil, p.errAt(i, keyOff, "duplicate key %q (first defined on line %d)", key, first)
		}
		seen[key] = i + p.first
		m.Pairs = append(m.Pairs, Pair{Key: key, Line: i + p.first, Column: utf8.RuneCountInString(p.lines[i][:keyOff]) + 1, Value: val})
	}
}

// isExplicitKey reports whether s starts with the explicit key indicator
// "?" followed by a blank or the end of the line.
func isExplicitKey(s string) bool {
	return s != "" && s[0] == '?' && (len(s) == 1 || s[1] == ' ' || s[1] == '\t')
}

// explicitEntry parses an entry written with an explicit key (YAML 1.2,
// 8.2.2): "? key" on line idx at column indent, then optionally ": value"
// on the next content line at the same column; without it the value is
// empty. The key must be a scalar on the "?" line: keys that are
// collections or block scalars are not supported.
func (p *parser) explicitEntry(idx, indent, depth int) (key string, keyOff int, val *Node, err error) {
	l := p.lines[idx]
	off := indent + 1
	for off < len(l) && (l[off] == ' ' || l[off] == '\t') {
		off++
	}
	if off >= len(l) || l[off] == '#' {
		return "", 0, nil, p.errAt(idx, indent, "an explicit key (?) must be a scalar on the same line; complex keys are not supported")
	}
	if err := p.checkIndicator(idx, off, true); err != nil {
		return "", 0, nil, err
	}
	switch l[off] {
	case '"', '\'':
		var end int
		if key, end, err = p.quotedSingleLine(idx, off); err != nil {
			return "", 0, nil, err
		}
		if rest := strings.TrimLeft(l[end:], " \t"); rest != "" && rest[0] != '#' {
			return "", 0, nil, p.errAt(idx, len(l)-len(rest), "unexpected text after the explicit key")
		}
	case '[', '{', '|', '>', '-':
		return "", 0, nil, p.errAt(idx, off, "complex mapping keys (collections or block scalars after ?) are not supported")
	default:
		if key, _, err = p.plainLine(idx, off); err != nil {
			return "", 0, nil, p.errAt(idx, off, "complex mapping keys (a mapping after ?) are not supported")
		}
	}
	p.pos = idx + 1
	j := p.nextContent(p.pos)
	if j >= 0 {
		jind, err := p.indentOf(j)
		if err != nil {
			return "", 0, nil, err
		}
		if s := p.lines[j][jind:]; jind == indent && s[0] == ':' && (len(s) == 1 || s[1] == ' ' || s[1] == '\t') {
			p.pos = j + 1
			val, err = p.parseValue(j, jind+1, indent, true, depth)
			return key, off, val, err
		}
	}
	return key, off, p.node(ScalarNode, idx, len(l)), nil
}

// looksLikeKey reports whether the line at idx starts a "key: value" entry.
func (p *parser) looksLikeKey(idx, off int) bool {
	_, _, _, err := p.parseKey(idx, off)
	return err == nil
}

// parseKey reads a mapping key starting at byte off of line idx and returns
// the key, its offset and the offset just after the ':'.
func (p *parser) parseKey(idx, off int) (key string, keyOff, after int, err error) {
	l := p.lines[idx]
	s := l[off:]
	if err := p.checkIndicator(idx, off, true); err != nil {
		return "", 0, 0, err
	}
	if s[0] == '"' || s[0] == '\'' {
		val, end, err := p.quotedSingleLine(idx, off)
		if err != nil {
			return "", 0, 0, err
		}
		j := end
		for j < len(l) && (l[j] == ' ' || l[j] == '\t') {
			j++
		}
		if j >= len(l) || l[j] != ':' || (j+1 < len(l) && l[j+1] != ' ' && l[j+1] != '\t') {
			return "", 0, 0, p.errAt(idx, j, "expected ':' after the quoted key")
		}
		return val, off, j + 1, nil
	}
	for j := off; j < len(l); j++ {
		c := l[j]
		if c == '#' && j > off && (l[j-1] == ' ' || l[j-1] == '\t') {
			break
		}
		if c == ':' && (j+1 == len(l) || l[j+1] == ' ' || l[j+1] == '\t') {
			k := strings.TrimRight(l[off:j], " \t")
			if k == "" {
				return "", 0, 0, p.errAt(idx, off, "empty mapping key")
			}
			return k, off, j + 1, nil
		}
	}
	return "", 0, 0, p.errAt(idx, off, "expected a mapping entry \"key: value\"")
}

// checkIndicator rejects YAML features outside the subset at byte off of
// line idx, where a key (key=true) or a value starts.
func (p *parser) checkIndicator(idx, off int, key bool) error {
	s := p.lines[idx][off:]
	if s == "" {
		return nil
	}
	sep := len(s) == 1 || s[1] == ' ' || s[1] == '\t'
	switch s[0] {
	case '&':
		return p.errAt(idx, off, "YAML anchors (&) are not supported in SKILL.md frontmatter")
	case '*':
		return p.errAt(idx, off, "YAML aliases (*) are not supported in SKILL.md frontmatter")
	case '!':
		return p.errAt(idx, off, "YAML tags (!) are not supported in SKILL.md frontmatter")
	case '%':
		if key && off == 0 {
			return p.errAt(idx, off, "YAML directives (%%) are not supported in SKILL.md frontmatter")
		}
		return p.errAt(idx, off, "the indicator character '%%' cannot start a plain value; quote it")
	case '@', '`':
		return p.errAt(idx, off, "the reserved character %q cannot start a plain value; quote it", s[0])
	case '?':
		if sep {
			return p.errAt(idx, off, "complex mapping keys (?) are not supported")
		}
	case '|', '>':
		if key {
			return p.errAt(idx, off, "a block scalar (%c) cannot be a key", s[0])
		}
	case '-':
		if strings.HasPrefix(s, "---") && off == 0 {
			return p.errAt(idx, off, "multiple YAML documents are not supported in SKILL.md frontmatter")
		}
		if sep && key {
			return p.errAt(idx, off, "expected a mapping key, found a list item")
		}
	case '[', '{':
		if key {
			return p.errAt(idx, off, "flow collections cannot be mapping keys")
		}
	case ']', '}', ',':
		return p.errAt(idx, off, "the character %q cannot start a plain value; quote it", s[0])
	}
	return nil
}

// parseValue parses the value that starts at byte off of line idx (after a
// key's ':' or a list item's '-'); parent is the indentation of the
// collection holding it. p.pos must be idx+1 on entry and is left after the
// value.
func (p *parser) parseValue(idx, off, parent int, inMap bool, depth int) (*Node, error) {
	l := p.lines[idx]
	for off < len(l) && (l[off] == ' ' || l[off] == '\t') {
		off++
	}
	if off >= len(l) || l[off] == '#' {
		// The value is on the following lines, or empty.
		empty := p.node(ScalarNode, idx, off)
		j := p.nextContent(p.pos)
		if j < 0 {
			return empty, nil
		}
		ind, err := p.indentOf(j)
		if err != nil {
			return nil, err
		}
		s := p.lines[j][ind:]
		isItem := s[0] == '-' && (len(s) == 1 || s[1] == ' ' || s[1] == '\t')
		switch {
		case isItem && (ind > parent || ind == parent && inMap):
			return p.parseList(j, ind, depth+1)
		case ind <= parent:
			return empty, nil
		case p.looksLikeKey(j, ind) || isExplicitKey(s):
			return p.parseMap(j, ind, depth+1)
		default:
			p.pos = j + 1
			return p.parseValue(j, ind, parent, inMap, depth)
		}
	}
	if err := p.checkIndicator(idx, off, false); err != nil {
		return nil, err
	}
	switch c := l[off]; {
	case c == '|' || c == '>':
		return p.blockScalar(idx, off, parent)
	case c == '"' || c == '\'':
		return p.quoted(idx, off)
	case c == '[' || c == '{':
		return p.flow(idx, off)
	case c == '-' && (off+1 == len(l) || l[off+1] == ' ' || l[off+1] == '\t'):
		return nil, p.errAt(idx, off, "a list cannot start on the same line as its key; put each \"- item\" on its own line")
	}
	return p.plain(idx, off, parent)
}

// parseList parses a block list whose "-" markers sit at column indent.
func (p *parser) parseList(idx, indent, depth int) (*Node, error) {
	if depth > maxNesting {
		return nil, p.errAt(idx, indent, "nesting deeper than %d levels is not supported", maxNesting)
	}
	list := p.node(ListNode, idx, indent)
	p.pos = idx
	for {
		i := p.nextContent(p.pos)
		if i < 0 {
			p.pos = len(p.lines)
			return list, nil
		}
		ind, err := p.indentAt(i)
		if err != nil {
			return nil, err
		}
		l := p.lines[i]
		if ind < indent || ind == indent && !(l[ind] == '-' && (ind+1 == len(l) || l[ind+1] == ' ' || l[ind+1] == '\t')) {
			p.pos = i
			return list, nil
		}
		if ind > indent {
			return nil, p.errAt(i, ind, "unexpected indentation in a list (expected \"- item\" at column %d)", indent+1)
		}
		off := ind + 1
		for off < len(l) && (l[off] == ' ' || l[off] == '\t') {
			off++
		}
		// An item may itself be a block mapping ("- name: a" with more
		// keys below at the same column) or a block list ("- - a"),
		// starting on the item's line.
		var item *Node
		switch rest := l[off:]; {
		case rest != "" && rest[0] != '#' && (p.looksLikeKey(i, off) || isExplicitKey(rest)):
			p.inlineIdx, p.inlineOff = i, off
			item, err = p.parseMap(i, off, depth+1)
		case rest != "" && rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ' || rest[1] == '\t'):
			p.inlineIdx, p.inlineOff = i, off
			item, err = p.parseList(i, off, depth+1)
		default:
			p.pos = i + 1
			item, err = p.parseValue(i, off, indent, false, depth)
		}
		p.inlineIdx = -1
		if err != nil {
			return nil, err
		}
		list.Items = append(list.Items, item)
	}
}

// plain parses a plain scalar starting at byte off of line idx, folding
// continuation lines indented deeper than parent.
func (p *parser) plain(idx, off, parent int) (*Node, error) {
	n := p.node(ScalarNode, idx, off)
	text, ended, err := p.plainLine(idx, off)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(text)
	breaks := 0
	i := idx + 1
	for ; !ended && i < len(p.lines); i++ {
		l := p.lines[i]
		t := strings.TrimLeft(l, " \t")
		if t == "" {
			breaks++
			continue
		}
		ind, err := p.indentOf(i)
		if err != nil {
			return nil, err
		}
		if ind <= parent || t[0] == '#' {
			break
		}
		text, end, err := p.plainLine(i, len(l)-len(t))
		if err != nil {
			return nil, err
		}
		if breaks == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteString(strings.Repeat("\n", breaks))
		}
		breaks = 0
		b.WriteString(text)
		ended = end
	}
	p.pos = i
	n.Value = b.String()
	return n, nil
}

// plainLine returns the plain-scalar text of one line from byte off, and
// whether a comment ended the scalar.
func (p *parser) plainLine(idx, off int) (string, bool, error) {
	l := p.lines[idx]
	end := len(l)
	comment := false
	for j := off; j < len(l); j++ {
		c := l[j]
		if c == '#' && j > off && (l[j-1] == ' ' || l[j-1] == '\t') {
			end, comment = j, true
			break
		}
		if c == ':' && (j+1 == len(l) || l[j+1] == ' ' || l[j+1] == '\t') {
			return "", false, p.errAt(idx, j, "mapping values are not allowed here: a plain value cannot contain \": \"; quote the value")
		}
	}
	return strings.TrimRight(l[off:end], " \t"), comment, nil
}

// quotedSingleLine parses a quoted scalar that must close on line idx and
// returns its value and the offset after the closing quote.
func (p *parser) quotedSingleLine(idx, off int) (string, int, error) {
	v, _, endOff, err := p.quotedScan(idx, off, idx)
	if err != nil {
		return "", 0, err
	}
	return v, endOff, nil
}

// quoted parses a single- or double-quoted scalar that may continue on
// following lines.
func (p *parser) quoted(idx, off int) (*Node, error) {
	n := p.node(ScalarNode, idx, off)
	v, endIdx, endOff, err := p.quotedScan(idx, off, len(p.lines)-1)
	if err != nil {
		return nil, err
	}
	if rest := strings.TrimLeft(p.lines[endIdx][endOff:], " \t"); rest != "" && rest[0] != '#' {
		return nil, p.errAt(endIdx, len(p.lines[endIdx])-len(rest), "unexpected text after the closing quote")
	}
	n.Value = v
	p.pos = endIdx + 1
	return n, nil
}

// quotedScan reads a quoted scalar opening at (idx, off), allowed to run to
// line last, and returns its value and the position after the closing quote.
// Line breaks fold as YAML says: a single break becomes a space, each empty
// line a newline, and a backslash at the end of a line (double quotes only)
// joins without a space; blanks around breaks are dropped, escaped ones kept.
func (p *parser) quotedScan(idx, off, last int) (string, int, int, error) {
	q := p.lines[idx][off]
	var b []byte
	keep := 0 // length of b without trailing unescaped blanks
	i, j := idx, off+1
	unterminated := func() (string, int, int, error) {
		return "", 0, 0, p.errAt(idx, off, "unterminated %s string", quoteName(q))
	}
	for {
		l := p.lines[i]
		escapedBreak := false
	scan:
		for j < len(l) {
			c := l[j]
			switch {
			case c == q && q == '\'' && j+1 < len(l) && l[j+1] == '\'':
				b = append(b, '\'')
				j += 2
				keep = len(b)
			case c == q:
				return string(b), i, j + 1, nil
			case c == '\\' && q == '"':
				if j+1 == len(l) {
					escapedBreak = true
					break scan
				}
				r, size, err := p.escape(i, j)
				if err != nil {
					return "", 0, 0, err
				}
				b = append(b, r...)
				j += size
				keep = len(b)
			default:
				b = append(b, c)
				j++
				if c != ' ' && c != '\t' {
					keep = len(b)
				}
			}
		}
		if !escapedBreak {
			b = b[:keep]
		}
		breaks := 0
		k := i + 1
		for ; k <= last && k < len(p.lines) && strings.TrimLeft(p.lines[k], " \t") == ""; k++ {
			breaks++
		}
		if k > last || k >= len(p.lines) || isDelimiterLike(p.lines[k]) {
			return unterminated()
		}
		switch {
		case escapedBreak:
			b = append(b, strings.Repeat("\n", breaks)...)
		case breaks == 0:
			b = append(b, ' ')
		default:
			b = append(b, strings.Repeat("\n", breaks)...)
		}
		keep = len(b)
		i = k
		j = len(p.lines[i]) - len(strings.TrimLeft(p.lines[i], " \t"))
	}
}

func isDelimiterLike(l string) bool {
	return strings.HasPrefix(l, "---") || strings.HasPrefix(l, "...")
}

func quoteName(q byte) string {
	if q == '"' {
		return "double-quoted"
	}
	return "single-quoted"
}

// escape decodes the double-quoted escape sequence at byte j of line i.
func (p *parser) escape(i, j int) (string, int, error) {
	l := p.lines[i]
	c := l[j+1]
	simple := map[byte]string{
		'0': "\x00", 'a': "\a", 'b': "\b", 't': "\t", '\t': "\t", 'n': "\n", 'v': "\v",
		'f': "\f", 'r': "\r", 'e': "\x1b", ' ': " ", '"': "\"", '/': "/", '\\': "\\",
		'N': "\u0085", '_': "\u00a0", 'L': "\u2028", 'P': "\u2029",
	}
	if s, ok := simple[c]; ok {
		return s, 2, nil
	}
	width := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
	if width == 0 {
		return "", 0, p.errAt(i, j, "unknown escape sequence \"\\%c\" in a double-quoted string", c)
	}
	if j+2+width > len(l) {
		return "", 0, p.errAt(i, j, "truncated escape sequence \"\\%c\"", c)
	}
	v, err := strconv.ParseUint(l[j+2:j+2+width], 16, 32)
	if err != nil {
		return "", 0, p.errAt(i, j, "invalid escape sequence %q", l[j:j+2+width])
	}
	r := rune(v)
	if !utf8.ValidRune(r) {
		return "", 0, p.errAt(i, j, "escape sequence %q is not a valid Unicode character", l[j:j+2+width])
	}
	return string(r), 2 + width, nil
}

// blockScalar parses a literal (|) or folded (>) block scalar whose header is
// at byte off of line idx; parent is the indentation of the enclosing
// collection.
func (p *parser) blockScalar(idx, off, parent int) (*Node, error) {
	n := p.node(ScalarNode, idx, off)
	l := p.lines[idx]
	folded := l[off] == '>'
	chomp := byte(0) // 0 clip, '-' strip, '+' keep
	explicit := 0
	j := off + 1
	for ; j < len(l) && l[j] != ' ' && l[j] != '\t'; j++ {
		switch c := l[j]; {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = c
		case c >= '1' && c <= '9' && explicit == 0:
			explicit = int(c - '0')
		default:
			return nil, p.errAt(idx, j, "invalid block scalar header %q (expected %c, %c-, %c+ or an indentation digit 1-9)", l[off:], l[off], l[off], l[off])
		}
	}
	if rest := strings.TrimLeft(l[j:], " \t"); rest != "" && rest[0] != '#' {
		return nil, p.errAt(idx, len(l)-len(rest), "unexpected text after the block scalar header; the text goes on the following lines")
	}
	// Find the content indentation.
	// Without an indicator, the indentation is that of the first non-empty
	// line, or more if a blank line before it has more spaces (then that
	// line ends the scalar and is an error further up, as in YAML).
	indent := parent + 1
	if explicit > 0 {
		indent = parent + explicit
	} else {
		for k := idx + 1; k < len(p.lines); k++ {
			s := p.lines[k]
			sp := len(s) - len(strings.TrimLeft(s, " "))
			if sp > indent {
				indent = sp
			}
			if sp < len(s) && !(s[sp] == '\t' && strings.TrimSpace(s) == "") {
				break
			}
		}
	}
	var content []string // "" for empty lines
	k := idx + 1
	for ; k < len(p.lines); k++ {
		s := p.lines[k]
		sp := len(s) - len(strings.TrimLeft(s, " "))
		if sp == len(s) { // spaces only
			if sp > indent {
				content = append(content, s[indent:])
			} else {
				content = append(content, "")
			}
			continue
		}
		if sp < indent {
			if s[sp] == '\t' && strings.TrimSpace(s) == "" {
				content = append(content, "")
				continue
			}
			break
		}
		content = append(content, s[indent:])
	}
	// Trailing empty lines are given back to the enclosing mapping, except
	// that they count for "keep" chomping.
	last := len(content) - 1
	for last >= 0 && content[last] == "" {
		last--
	}
	trailing := len(content) - 1 - last
	p.pos = k
	var b strings.Builder
	pending := 0
	prevNormal, started := false, false
	for _, s := range content[:last+1] {
		if s == "" {
			pending++
			continue
		}
		normal := s[0] != ' ' && s[0] != '\t'
		switch {
		case !started:
			b.WriteString(strings.Repeat("\n", pending))
		case folded && prevNormal && normal:
			if pending == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteString(strings.Repeat("\n", pending))
			}
		default:
			b.WriteString(strings.Repeat("\n", pending+1))
		}
		b.WriteString(s)
		started, prevNormal, pending = true, normal, 0
	}
	switch chomp {
	case 0:
		if started {
			b.WriteByte('\n')
		}
	case '+':
		if started {
			b.WriteByte('\n')
		}
		b.WriteString(strings.Repeat("\n", trailing))
	}
	n.Value = b.String()
	return n, nil
}

// flow parses a single-line flow list "[a, b]" or flow map "{k: v}" whose
// opening bracket is at byte off of line idx. Items are scalars.
func (p *parser) flow(idx, off int) (*Node, error) {
	l := p.lines[idx]
	open := l[off]
	closer := byte(']')
	kind := ListNode
	if open == '{' {
		closer, kind = '}', MapNode
	}
	n := p.node(kind, idx, off)
	n.Flow = true
	seen := map[string]bool{}
	j := off + 1
	skip := func() {
		for j < len(l) && (l[j] == ' ' || l[j] == '\t') {
			j++
		}
	}
	// scalar reads one flow scalar, stopping at ',', ':' (in maps) or the closer.
	scalar := func(isKey bool) (*Node, error) {
		skip()
		s := p.node(ScalarNode, idx, j)
		if j >= len(l) {
			return nil, p.errAt(idx, off, "unclosed flow collection %q: flow lists and maps must be closed on the same line", string(open))
		}
		switch c := l[j]; c {
		case '"', '\'':
			v, end, err := p.quotedSingleLine(idx, j)
			if err != nil {
				return nil, err
			}
			s.Value, j = v, end
			return s, nil
		case '[', '{':
			return nil, p.errAt(idx, j, "nested flow collections are not supported in SKILL.md frontmatter")
		case '-', '?':
			if j+1 < len(l) && (l[j+1] == ' ' || l[j+1] == '\t') {
				return nil, p.errAt(idx, j, "%q followed by a space cannot start a value inside a flow collection; quote it", c)
			}
		case '&', '*', '!', '@', '`', '|', '>', '%':
			if err := p.checkIndicator(idx, j, false); err != nil {
				return nil, err
			}
			return nil, p.errAt(idx, j, "%q cannot start a value inside a flow collection; quote it", c)
		}
		start := j
		for j < len(l) {
			c := l[j]
			if c == ',' || c == closer || c == ']' || c == '}' || c == '[' || c == '{' {
				break
			}
			if c == '#' && j > start && (l[j-1] == ' ' || l[j-1] == '\t') {
				break
			}
			if c == ':' && (j+1 == len(l) || strings.IndexByte(" \t,]}", l[j+1]) >= 0) {
				if !isKey {
					return nil, p.errAt(idx, j, "\"key: value\" pairs are not allowed here; quote the value")
				}
				break
			}
			j++
		}
		s.Value = strings.TrimRight(l[start:j], " \t")
		return s, nil
	}
	for {
		skip()
		if j >= len(l) || l[j] == '#' {
			return nil, p.errAt(idx, off, "unclosed flow collection %q: flow lists and maps must be closed on the same line", string(open))
		}
		if l[j] == closer {
			j++
			break
		}
		if l[j] == ',' {
			return nil, p.errAt(idx, j, "empty entry in a flow collection")
		}
		if kind == ListNode {
			item, err := scalar(false)
			if err != nil {
				return nil, err
			}
			n.Items = append(n.Items, item)
		} else {
			k, err := scalar(true)
			if err != nil {
				return nil, err
			}
			skip()
			if j >= len(l) || l[j] != ':' {
				return nil, p.errAt(idx, j, "expected ':' after the key %q in a flow map", k.Value)
			}
			if k.Value == "" {
				return nil, p.errAt(idx, j, "empty key in a flow map")
			}
			if seen[k.Value] {
				return nil, p.errAt(idx, j, "duplicate key %q", k.Value)
			}
			seen[k.Value] = true
			j++
			v, err := scalar(false)
			if err != nil {
				return nil, err
			}
			n.Pairs = append(n.Pairs, Pair{Key: k.Value, Line: k.Line, Column: k.Column, Value: v})
		}
		skip()
		if j < len(l) && l[j] == ',' {
			j++
			continue
		}
		if j < len(l) && l[j] == closer {
			j++
			break
		}
		if j >= len(l) || l[j] == '#' {
			return nil, p.errAt(idx, off, "unclosed flow collection %q: flow lists and maps must be closed on the same line", string(open))
		}
		return nil, p.errAt(idx, j, "expected ',' or %q in a flow collection", string(closer))
	}
	if rest := strings.TrimLeft(l[j:], " \t"); rest != "" && rest[0] != '#' {
		return nil, p.errAt(idx, len(l)-len(rest), "unexpected text after the flow collection")
	}
	p.pos = idx + 1
	return n, nil
}
