package validate

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// recoverFrontmatter reads, from a SKILL.md whose frontmatter does not
// parse, what a line-oriented loader would: the top-level "name:" and
// "description:" entries, each with its indented continuation lines
// parsed as YAML on their own, and the body after the closing "---". A
// description that does not parse on its own either (say "Use when: ...",
// the commonest break) is taken as written on its line, trimmed, one pair
// of matching quotes removed; a name must parse. It returns nil when the
// file is not UTF-8, the frontmatter is not delimited, or it holds no
// non-empty name that parses: such a skill cannot be named, and is refused.
func recoverFrontmatter(data []byte) *Frontmatter {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return nil
	}
	lines, end, body := splitFrontmatter(data)
	if end < 0 {
		return nil
	}
	fm := &Frontmatter{EndLine: end + 1, Body: body}
	for i := 1; i < end; i++ {
		key, _, ok := strings.Cut(lines[i], ":")
		if !ok || key != "name" && key != "description" {
			continue
		}
		if _, dup := fm.Lookup(key); dup {
			continue
		}
		j := i + 1
		for j < end && (isBlank(lines[j]) || lines[j][0] == ' ' || lines[j][0] == '\t') {
			j++
		}
		v := recoverValue(lines[i:j], i+1, len(key)+2, key == "description")
		if v == nil {
			return nil // a name that does not parse
		}
		fm.Pairs = append(fm.Pairs, Pair{Key: key, Line: i + 1, Column: 1, Value: v})
	}
	if p, ok := fm.Lookup("name"); !ok || strings.TrimSpace(p.Value.Value) == "" {
		return nil
	}
	return fm
}

// recoverValue returns the scalar value of the entry written on lines
// (its key's line first, at line number line; the value starts at column
// col of it), or nil when it does not parse and raw is false.
func recoverValue(lines []string, line, col int, raw bool) *Node {
	n := &Node{Kind: ScalarNode, Line: line, Column: col}
	doc := "---\n" + strings.Join(lines, "\n") + "\n---\n"
	if fm, err := ParseFrontmatter([]byte(doc)); err == nil && len(fm.Pairs) == 1 && fm.Pairs[0].Value.Kind == ScalarNode {
		n.Value = fm.Pairs[0].Value.Value
		return n
	}
	if !raw {
		return nil
	}
	_, v, _ := strings.Cut(lines[0], ":")
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	// Control characters stay out of a name or description read this way.
	if _, _, _, bad := ControlChar(v); bad {
		v = ""
	}
	n.Value = v
	return n
}
