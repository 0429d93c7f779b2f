package validate

import (
	"strings"
)

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
