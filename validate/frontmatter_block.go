package validate

import "strings"

// blockScalar parses a literal (|) or folded (>) block scalar whose header is
// at byte off of line idx; parent is the indentation of the enclosing
// collection.
func (p *parser) blockScalar(idx, off, parent int) (*Node, error) {
	n := p.node(ScalarNode, idx, off)
	folded, chomp, explicit, err := p.blockHeader(idx, off)
	if err != nil {
		return nil, err
	}
	indent := parent + explicit
	if explicit == 0 {
		indent = p.blockIndent(idx, parent)
	}
	content, end := p.blockLines(idx, indent)
	p.pos = end
	n.Value = foldBlock(content, folded, chomp)
	return n, nil
}

// blockHeader reads the header of the block scalar at byte off of line idx:
// whether it is folded (>), its chomping indicator (0 clip, '-' strip, '+'
// keep) and its explicit indentation (0 when none). Only a comment may
// follow the header on its line.
func (p *parser) blockHeader(idx, off int) (folded bool, chomp byte, explicit int, err error) {
	l := p.lines[idx]
	folded = l[off] == '>'
	j := off + 1
	for ; j < len(l) && l[j] != ' ' && l[j] != '\t'; j++ {
		switch c := l[j]; {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = c
		case c >= '1' && c <= '9' && explicit == 0:
			explicit = int(c - '0')
		default:
			return false, 0, 0, p.errAt(idx, j, "invalid block scalar header %q (expected %c, %c-, %c+ or an indentation digit 1-9)", l[off:], l[off], l[off], l[off])
		}
	}
	if rest := strings.TrimLeft(l[j:], " \t"); rest != "" && rest[0] != '#' {
		return false, 0, 0, p.errAt(idx, len(l)-len(rest), "unexpected text after the block scalar header; the text goes on the following lines")
	}
	return folded, chomp, explicit, nil
}

// blockIndent finds the content indentation of a block scalar without an
// indentation indicator whose header is on line idx: that of the first
// non-empty line, or more if a blank line before it has more spaces (then
// that line ends the scalar and is an error further up, as in YAML).
func (p *parser) blockIndent(idx, parent int) int {
	indent := parent + 1
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
	return indent
}

// blockLines collects the lines of a block scalar indented by indent after
// its header on line idx, without that indentation ("" for empty lines),
// and returns them with the index of the first line after the scalar.
func (p *parser) blockLines(idx, indent int) (content []string, end int) {
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
	return content, k
}

// foldBlock joins the lines of a block scalar into its value: literal
// lines keep their breaks, folded ones (folded) join with a space where
// two lines that are not more indented meet, and chomp says what happens
// to the final break and trailing empty lines.
func foldBlock(content []string, folded bool, chomp byte) string {
	// Trailing empty lines are given back to the enclosing mapping, except
	// that they count for "keep" chomping.
	last := len(content) - 1
	for last >= 0 && content[last] == "" {
		last--
	}
	trailing := len(content) - 1 - last
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
	return b.String()
}
