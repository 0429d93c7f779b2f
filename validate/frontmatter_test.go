package validate

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// scalarFields flattens the top-level scalar fields of fm.
func scalarFields(fm *Frontmatter) map[string]string {
	m := map[string]string{}
	for _, p := range fm.Pairs {
		if p.Value.Kind == ScalarNode {
			m[p.Key] = p.Value.Value
		}
	}
	return m
}

func TestParseFrontmatterScalars(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"plain", "---\nname: a\ndescription: b c\n---\n", map[string]string{"name": "a", "description": "b c"}},
		{"comment", "---\nname: a # note\n# whole line\ndescription: x#y\n---\n", map[string]string{"name": "a", "description": "x#y"}},
		{"yaml 1.1 booleans stay strings", "---\na: yes\nb: no\nc: on\nd: true\ne: 123\nf: null\ng: ~\n---\n",
			map[string]string{"a": "yes", "b": "no", "c": "on", "d": "true", "e": "123", "f": "null", "g": "~"}},
		{"empty value", "---\nname:\ndescription: d\n---\n", map[string]string{"name": "", "description": "d"}},
		{"plain multi-line", "---\ndescription: one\n  two\n\n  three\nname: n\n---\n", map[string]string{"description": "one two\nthree", "name": "n"}},
		{"double quoted escapes", "---\nd: \"a\\tb\\n\\\"q\\\" \\u00e9 \\x41 \\U0001F600 \\\\\"\n---\n", map[string]string{"d": "a\tb\n\"q\" é A 😀 \\"}},
		{"double quoted folding", "---\nd: \"one\n  two\n\n  three \\\n  four\"\n---\n", map[string]string{"d": "one two\nthree four"}},
		{"single quoted", "---\nd: 'it''s \\n'\n---\n", map[string]string{"d": "it's \\n"}},
		{"single quoted multi-line", "---\nd: 'a\n  b'\n---\n", map[string]string{"d": "a b"}},
		{"literal clip", "---\nd: |\n  a\n   b\n\n  c\n\n\ne: x\n---\n", map[string]string{"d": "a\n b\n\nc\n", "e": "x"}},
		{"literal strip", "---\nd: |-\n  a\n  b\n\n---\n", map[string]string{"d": "a\nb"}},
		{"literal keep", "---\nd: |+\n  a\n\n\n---\n", map[string]string{"d": "a\n\n\n"}},
		{"folded", "---\nd: >\n  a\n  b\n\n  c\n    more\n  d\n---\n", map[string]string{"d": "a b\nc\n  more\nd\n"}},
		{"folded strip", "---\nd: >-\n  a\n  b\n---\n", map[string]string{"d": "a b"}},
		{"explicit indentation", "---\nd: |2\n    indented\n  base\n---\n", map[string]string{"d": "  indented\nbase\n"}},
		{"indicator order", "---\nd: >-2\n   x\n---\n", map[string]string{"d": " x"}},
		{"header comment", "---\nd: > # folded\n  x\n---\n", map[string]string{"d": "x\n"}},
		{"empty block", "---\nd: |\ne: x\n---\n", map[string]string{"d": "", "e": "x"}},
		{"value on next line", "---\nd:\n  just text\n  more\n---\n", map[string]string{"d": "just text more"}},
		{"quoted key", "---\n\"name\": a\n'x y': b\n---\n", map[string]string{"name": "a", "x y": "b"}},
		{"url value", "---\nu: https://example.com/a:b\n---\n", map[string]string{"u": "https://example.com/a:b"}},
		{"bom and crlf", "\ufeff---\r\nname: a\r\ndescription: >-\r\n  x\r\n  y\r\n---\r\nbody\r\n", map[string]string{"name": "a", "description": "x y"}},
		{"trailing blanks on delimiters", "--- \nname: a\n---\t\n", map[string]string{"name": "a"}},
		{"indented top level", "---\n  name: a\n  description: b\n---\n", map[string]string{"name": "a", "description": "b"}},
		{"tab after colon", "---\nname:\ta\n---\n", map[string]string{"name": "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, err := ParseFrontmatter([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseFrontmatter: %v", err)
			}
			if got := scalarFields(fm); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// plainValue turns a node into plain Go values for comparison.
func plainValue(n *Node) any {
	switch n.Kind {
	case MapNode:
		m := map[string]any{}
		for _, p := range n.Pairs {
			m[p.Key] = plainValue(p.Value)
		}
		return m
	case ListNode:
		l := []any{}
		for _, it := range n.Items {
			l = append(l, plainValue(it))
		}
		return l
	}
	return n.Value
}

func TestParseFrontmatterCollections(t *testing.T) {
	tests := []struct {
		name string
		in   string
		key  string
		want any
	}{
		{"metadata map", "---\nmetadata:\n  author: me\n  version: \"1.0\"\n---\n", "metadata", map[string]any{"author": "me", "version": "1.0"}},
		{"flow list", "---\nt: [Read, 'Bash(git:*)', \"Write\", ]\n---\n", "t", []any{"Read", "Bash(git:*)", "Write"}},
		{"empty flow list", "---\nt: []\n---\n", "t", []any{}},
		{"flow map", "---\nm: {a: b, 'c': \"d\"}\n---\n", "m", map[string]any{"a": "b", "c": "d"}},
		{"block list indented", "---\nt:\n  - a\n  - 'b c'\n---\n", "t", []any{"a", "b c"}},
		{"block list same indent", "---\nt:\n- a\n- b\nu: x\n---\n", "t", []any{"a", "b"}},
		{"list in metadata", "---\nmetadata:\n  tags: [x, y]\n  owners:\n    - a\n---\n", "metadata", map[string]any{"tags": []any{"x", "y"}, "owners": []any{"a"}}},
		{"block scalar in list", "---\nt:\n  - |\n    a\n  - b\n---\n", "t", []any{"a\n", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, err := ParseFrontmatter([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseFrontmatter: %v", err)
			}
			p, ok := fm.Lookup(tt.key)
			if !ok {
				t.Fatalf("no field %q", tt.key)
			}
			if got := plainValue(p.Value); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestParseFrontmatterErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		line, col int
		msg       string
	}{
		{"empty file", "", 1, 1, "must start with YAML frontmatter"},
		{"no frontmatter", "# Title\n", 1, 1, "must start with YAML frontmatter"},
		{"unclosed", "---\nname: a\n", 1, 1, "not properly closed"},
		{"empty frontmatter", "---\n---\n", 2, 1, "must be a YAML mapping"},
		{"scalar document", "---\njust text\n---\n", 2, 1, "expected a mapping entry"},
		{"list document", "---\n- a\n---\n", 2, 1, "found a list item"},
		{"colon in plain value", "---\ndescription: Use when: asked\n---\n", 2, 22, "mapping values are not allowed"},
		{"colon in continuation", "---\nd: a\n  b: c\n---\n", 3, 4, "mapping values are not allowed"},
		{"tab indentation", "---\nm:\n\tk: v\n---\n", 3, 1, "tab character"},
		{"bad indentation", "---\nname: a\n  description: b\n---\n", 3, 14, "mapping values are not allowed"},
		{"unexpected indentation", "---\nm:\n  a: \"b\"\n    c: d\n---\n", 4, 5, "unexpected indentation"},
		{"duplicate key", "---\nname: a\nname: b\n---\n", 3, 1, "duplicate key \"name\" (first defined on line 2)"},
		{"duplicate nested key", "---\nm:\n  a: 1\n  a: 2\n---\n", 4, 3, "duplicate key \"a\""},
		{"anchor", "---\nname: &x a\n---\n", 2, 7, "anchors"},
		{"alias", "---\nname: *x\n---\n", 2, 7, "aliases"},
		{"tag", "---\nname: !!str a\n---\n", 2, 7, "tags"},
		{"directive", "---\n%YAML 1.2\n---\n", 2, 1, "directives"},
		{"after document end", "---\nname: a\n...\nb: c\n---\n", 4, 1, "after the YAML document end marker"},
		{"second document", "---\nname: a\n--- x\n---\n", 3, 1, "multiple YAML documents"},
		{"complex key", "---\n? [a]\n: b\n---\n", 2, 3, "cannot be mapping keys"},
		{"mapping as key", "---\n? a: b\n---\n", 2, 3, "complex mapping keys"},
		{"percent value", "---\nname: %x\n---\n", 2, 7, "indicator character '%'"},
		{"percent nested key", "---\nm:\n  %k: v\n---\n", 3, 3, "indicator character '%'"},
		{"percent in flow", "---\nt: [%a]\n---\n", 2, 5, "indicator character '%'"},
		{"backtick value", "---\nname: `x`\n---\n", 2, 7, "reserved character"},
		{"reserved", "---\nname: @x\n---\n", 2, 7, "reserved character"},
		{"unterminated double", "---\nd: \"abc\n---\n", 2, 4, "unterminated double-quoted"},
		{"unterminated single", "---\nd: 'abc\n---\n", 2, 4, "unterminated single-quoted"},
		{"bad escape", "---\nd: \"a\\qb\"\n---\n", 2, 6, "unknown escape"},
		{"bad unicode escape", "---\nd: \"\\uD800\"\n---\n", 2, 5, "not a valid Unicode character"},
		{"text after quote", "---\nd: \"a\" b\n---\n", 2, 8, "after the closing quote"},
		{"unclosed flow", "---\nt: [a, b\n  c]\n---\n", 2, 4, "closed on the same line"},
		{"nested flow", "---\nt: [a, [b]]\n---\n", 2, 8, "nested flow"},
		{"empty flow entry", "---\nt: [a,, b]\n---\n", 2, 7, "empty entry"},
		{"bad block header", "---\nd: |x\n  a\n---\n", 2, 5, "invalid block scalar header"},
		{"text after block header", "---\nd: | a\n---\n", 2, 6, "after the block scalar header"},
		{"inline list", "---\nt: - a\n---\n", 2, 4, "cannot start on the same line"},
		{"map in list misaligned", "---\nt:\n  - a: b\n     c: d\n---\n", 4, 7, "mapping values are not allowed"},
		{"map in list outdented", "---\nt:\n  - a: b\n   c: d\n---\n", 4, 4, "unexpected indentation"},
		{"invalid utf8", "---\nname: \xff\n---\n", 2, 7, "invalid UTF-8"},
		{"nul byte", "---\nname: a\x00\n---\n", 2, 8, "control character U+0000"},
		{"flow start char", "---\nname: ,a\n---\n", 2, 7, "cannot start a plain value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFrontmatter([]byte(tt.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *SyntaxError", err)
			}
			if se.Line != tt.line || se.Column != tt.col || !strings.Contains(se.Msg, tt.msg) {
				t.Errorf("got %d:%d %q, want %d:%d containing %q", se.Line, se.Column, se.Msg, tt.line, tt.col, tt.msg)
			}
		})
	}
}

func TestParseFrontmatterPositions(t *testing.T) {
	in := "---\nname: é-x\ndescription: >\n  text\nmetadata:\n  author: 'me'\n---\nline one\nline two\n"
	fm, err := ParseFrontmatter([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][4]int{ // key line, key col, value line, value col
		"name":        {2, 1, 2, 7},
		"description": {3, 1, 3, 14},
		"metadata":    {5, 1, 6, 3},
	}
	for _, p := range fm.Pairs {
		w := want[p.Key]
		if got := [4]int{p.Line, p.Column, p.Value.Line, p.Value.Column}; got != w {
			t.Errorf("%s: positions %v, want %v", p.Key, got, w)
		}
	}
	author := fm.Pairs[2].Value.Pairs[0]
	if author.Line != 6 || author.Column != 3 || author.Value.Column != 11 {
		t.Errorf("metadata.author at %d:%d value col %d, want 6:3 col 11", author.Line, author.Column, author.Value.Column)
	}
	if fm.EndLine != 7 || fm.Body != "line one\nline two\n" {
		t.Errorf("EndLine %d Body %q", fm.EndLine, fm.Body)
	}
}

func TestParseFrontmatterSizeCap(t *testing.T) {
	data := []byte("---\nname: a\ndescription: b\n---\n" + strings.Repeat("x", MaxSkillMDSize))
	_, err := ParseFrontmatter(data)
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "limit is 1048576 bytes") {
		t.Fatalf("got %v, want the size limit error", err)
	}
}

func TestParseFrontmatterDeepNesting(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\n")
	for i := 0; i < 40; i++ {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	b.WriteString(strings.Repeat(" ", 40) + "k: v\n---\n")
	_, err := ParseFrontmatter([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Fatalf("got %v, want a nesting error", err)
	}
}
