package validate

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

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
