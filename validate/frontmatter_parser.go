package validate

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

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
