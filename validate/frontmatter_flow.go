package validate

import "strings"

// flowReader reads one single-line flow collection.
type flowReader struct {
	p            *parser
	idx, off     int    // line and byte offset of the opening bracket
	l            string // the line
	j            int    // byte offset of the next unread character
	open, closer byte
}

// flow parses a single-line flow list "[a, b]" or flow map "{k: v}" whose
// opening bracket is at byte off of line idx. Items are scalars.
func (p *parser) flow(idx, off int) (*Node, error) {
	l := p.lines[idx]
	r := &flowReader{p: p, idx: idx, off: off, l: l, j: off + 1, open: l[off], closer: ']'}
	kind := ListNode
	if r.open == '{' {
		r.closer, kind = '}', MapNode
	}
	n := p.node(kind, idx, off)
	n.Flow = true
	seen := map[string]bool{}
	for {
		r.skip()
		if r.j >= len(l) || l[r.j] == '#' {
			return nil, r.unclosed()
		}
		if l[r.j] == r.closer {
			r.j++
			break
		}
		if l[r.j] == ',' {
			return nil, p.errAt(idx, r.j, "empty entry in a flow collection")
		}
		if err := r.entry(n, seen); err != nil {
			return nil, err
		}
		closed, err := r.separator()
		if err != nil {
			return nil, err
		}
		if closed {
			break
		}
	}
	if rest := strings.TrimLeft(l[r.j:], " \t"); rest != "" && rest[0] != '#' {
		return nil, p.errAt(idx, len(l)-len(rest), "unexpected text after the flow collection")
	}
	p.pos = idx + 1
	return n, nil
}

// skip moves past blanks.
func (r *flowReader) skip() {
	for r.j < len(r.l) && (r.l[r.j] == ' ' || r.l[r.j] == '\t') {
		r.j++
	}
}

// unclosed is the error for a collection the line ends inside.
func (r *flowReader) unclosed() error {
	return r.p.errAt(r.idx, r.off, "unclosed flow collection %q: flow lists and maps must be closed on the same line", string(r.open))
}

// entry reads one item of a flow list, or one "key: value" of a flow map
// (seen holds the map's keys so far), into n.
func (r *flowReader) entry(n *Node, seen map[string]bool) error {
	if n.Kind == ListNode {
		item, err := r.scalar(false)
		if err != nil {
			return err
		}
		n.Items = append(n.Items, item)
		return nil
	}
	k, err := r.scalar(true)
	if err != nil {
		return err
	}
	r.skip()
	if r.j >= len(r.l) || r.l[r.j] != ':' {
		return r.p.errAt(r.idx, r.j, "expected ':' after the key %q in a flow map", k.Value)
	}
	if k.Value == "" {
		return r.p.errAt(r.idx, r.j, "empty key in a flow map")
	}
	if seen[k.Value] {
		return r.p.errAt(r.idx, r.j, "duplicate key %q", k.Value)
	}
	seen[k.Value] = true
	r.j++
	v, err := r.scalar(false)
	if err != nil {
		return err
	}
	n.Pairs = append(n.Pairs, Pair{Key: k.Value, Line: k.Line, Column: k.Column, Value: v})
	return nil
}

// separator reads what follows an entry: ',' before the next one, or the
// closing bracket (closed is true).
func (r *flowReader) separator() (closed bool, err error) {
	r.skip()
	if r.j < len(r.l) && r.l[r.j] == ',' {
		r.j++
		return false, nil
	}
	if r.j < len(r.l) && r.l[r.j] == r.closer {
		r.j++
		return true, nil
	}
	if r.j >= len(r.l) || r.l[r.j] == '#' {
		return false, r.unclosed()
	}
	return false, r.p.errAt(r.idx, r.j, "expected ',' or %q in a flow collection", string(r.closer))
}

// scalar reads one flow scalar, stopping at ',', ':' (in maps) or the closer.
func (r *flowReader) scalar(isKey bool) (*Node, error) {
	r.skip()
	p, l, j := r.p, r.l, r.j
	s := p.node(ScalarNode, r.idx, j)
	if j >= len(l) {
		return nil, r.unclosed()
	}
	switch c := l[j]; c {
	case '"', '\'':
		v, end, err := p.quotedSingleLine(r.idx, j)
		if err != nil {
			return nil, err
		}
		s.Value, r.j = v, end
		return s, nil
	case '[', '{':
		return nil, p.errAt(r.idx, j, "nested flow collections are not supported in SKILL.md frontmatter")
	case '-', '?':
		if j+1 < len(l) && (l[j+1] == ' ' || l[j+1] == '\t') {
			return nil, p.errAt(r.idx, j, "%q followed by a space cannot start a value inside a flow collection; quote it", c)
		}
	case '&', '*', '!', '@', '`', '|', '>', '%':
		if err := p.checkIndicator(r.idx, j, false); err != nil {
			return nil, err
		}
		return nil, p.errAt(r.idx, j, "%q cannot start a value inside a flow collection; quote it", c)
	}
	v, err := r.plain(isKey)
	if err != nil {
		return nil, err
	}
	s.Value = v
	return s, nil
}

// plain reads a plain flow scalar, stopping at ',', a bracket, a comment
// or (for a key) ':'.
func (r *flowReader) plain(isKey bool) (string, error) {
	l := r.l
	start := r.j
	for r.j < len(l) {
		c := l[r.j]
		if c == ',' || c == r.closer || c == ']' || c == '}' || c == '[' || c == '{' {
			break
		}
		if c == '#' && r.j > start && (l[r.j-1] == ' ' || l[r.j-1] == '\t') {
			break
		}
		if c == ':' && (r.j+1 == len(l) || strings.IndexByte(" \t,]}", l[r.j+1]) >= 0) {
			if !isKey {
				return "", r.p.errAt(r.idx, r.j, "\"key: value\" pairs are not allowed here; quote the value")
			}
			break
		}
		r.j++
	}
	return strings.TrimRight(l[start:r.j], " \t"), nil
}
