package validate

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestYAMLSpecExamples parses examples of the YAML 1.2.2 specification
// (https://yaml.org/spec/1.2.2/), one or more per class of syntax that
// real SKILL.md files use and the reference validator accepts, wrapped as
// frontmatter under a top-level key where the example is a nested value.
func TestYAMLSpecExamples(t *testing.T) {
	tests := []struct {
		name string
		in   string // the frontmatter lines
		key  string
		want any
	}{
		// Example 2.4 "Sequence of Mappings", as a block list of mappings.
		{"2.4 sequence of mappings",
			"players:\n-\n  name: Mark McGwire\n  hr:   65\n-\n  name: Sammy Sosa\n  hr:   63\n",
			"players", []any{map[string]any{"name": "Mark McGwire", "hr": "65"}, map[string]any{"name": "Sammy Sosa", "hr": "63"}}},
		// Example 2.12 "Compact Nested Mapping".
		{"2.12 compact nested mapping",
			"items:\n# Products purchased\n- item    : Super Hoop\n  quantity: 1\n- item    : Basketball\n  quantity: 4\n",
			"items", []any{map[string]any{"item": "Super Hoop", "quantity": "1"}, map[string]any{"item": "Basketball", "quantity": "4"}}},
		// Example 8.15 "Block Sequence Entry Types" (without its block
		// scalar entry): a compact nested sequence and a compact mapping.
		{"8.15 compact sequence and mapping",
			"s:\n- # Empty\n- - one # Compact\n  - two # sequence\n- one: two # Compact mapping\n",
			"s", []any{"", []any{"one", "two"}, map[string]any{"one": "two"}}},
		// Example 8.14 "Block Sequence" nested under a mapping.
		{"8.14 block sequence",
			"block sequence:\n  - one\n  - two : three\n",
			"block sequence", []any{"one", map[string]any{"two": "three"}}},
		// Example 8.17 "Explicit Block Mapping Entries" (scalar keys).
		{"8.17 explicit keys",
			"m:\n  ? explicit key # Empty value\n  ? other\n  : value\n",
			"m", map[string]any{"explicit key": "", "other": "value"}},
		// Example 6.9 style: "? key" at the top level.
		{"explicit top-level key",
			"? name\n: spec-skill\n",
			"name", "spec-skill"},
		// Example 9.3 "Bare Documents" / 9.4: a document end marker.
		{"9.4 document end marker",
			"name: spec-skill\n...\n# a comment after the marker\n",
			"name", "spec-skill"},
		// Example 5.12/6.x: a plain scalar may contain indicators after
		// its first character.
		{"indicators inside a plain scalar",
			"d: a%b@c`d\n",
			"d", "a%b@c`d"},
		// Example 5.10 answer: reserved indicators are fine when quoted.
		{"5.10 quoted reserved indicators",
			"commercial-at: \"@text\"\ngrave-accent: '`text'\npercent: \"%x\"\n",
			"commercial-at", "@text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, err := ParseFrontmatter([]byte("---\n" + tt.in + "---\nbody\n"))
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

// TestYAMLSpecLineBreaks: YAML 1.2.2, 5.4 "Line Break Characters": CR LF,
// LF and a lone CR all end a line.
func TestYAMLSpecLineBreaks(t *testing.T) {
	for name, nl := range map[string]string{"LF": "\n", "CRLF": "\r\n", "CR": "\r"} {
		t.Run(name, func(t *testing.T) {
			in := strings.ReplaceAll("---\nname: spec-skill\ndescription: two\n  lines\n---\n# Body\n", "\n", nl)
			fm, err := ParseFrontmatter([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if p, _ := fm.Lookup("description"); p.Value == nil || p.Value.Value != "two lines" || p.Line != 3 {
				t.Errorf("description %+v", p)
			}
			if fm.EndLine != 5 {
				t.Errorf("EndLine %d, want 5", fm.EndLine)
			}
		})
	}
}

// TestYAMLSpecRejected: YAML 1.2.2, 5.3 "Indicator Characters": a plain
// scalar cannot start with "%" (directive), "@" or "`" (reserved); a
// second document after "..." is not one frontmatter.
func TestYAMLSpecRejected(t *testing.T) {
	for _, in := range []string{
		"name: %x\n", "name: @x\n", "name: `x`\n",
		"m:\n  - %a\n", "m:\n  - @a\n", "t: [`a`]\n", "m:\n  %k: v\n",
		"name: a\n...\nname: b\n",
	} {
		if _, err := ParseFrontmatter([]byte("---\n" + in + "---\n")); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestBodyControlCharacterWarns: a control character in the Markdown body
// is not a syntax error (the body is not YAML) but gives a warning; in the
// frontmatter it stays an error.
func TestBodyControlCharacterWarns(t *testing.T) {
	dir := writeSkill(t, "ctl-body", map[string]string{
		"SKILL.md": "---\nname: ctl-body\ndescription: A skill whose body holds a control character.\n---\nline \x1b[31m red\n",
	})
	r := Skill(dir, Options{})
	if !r.Valid || !hasMessage(r.Warnings, "control character U+001B in the Markdown body") {
		t.Errorf("valid %v errors %v warnings %v", r.Valid, messages(r.Errors), messages(r.Warnings))
	}
	dir = writeSkill(t, "ctl-fm", map[string]string{
		"SKILL.md": "---\nname: ctl-fm\ndescription: A control \x1b character.\n---\nbody\n",
	})
	if r := Skill(dir, Options{}); r.Valid {
		t.Errorf("control character in the frontmatter accepted")
	}
}

// TestMetadataListOfMappings: a block list of mappings under metadata (a
// list of contributors) parses; the non-string value gives a warning.
func TestMetadataListOfMappings(t *testing.T) {
	dir := writeSkill(t, "contributors", map[string]string{
		"SKILL.md": "---\nname: contributors\ndescription: A skill with a list of contributors in its metadata.\nmetadata:\n  version: \"1.0\"\n  contributors:\n    - name: Ada\n      email: ada@example.com\n    - name: Alan\n---\nbody\n",
	})
	r := Skill(dir, Options{})
	if !r.Valid || !hasMessage(r.Warnings, "metadata value for key 'contributors' should be a string, not a list") {
		t.Errorf("valid %v errors %v warnings %v", r.Valid, messages(r.Errors), messages(r.Warnings))
	}
}

// TestEachStreamsInOrder: Each hands over the results in the order of
// dirs, and stops starting folders once fn fails.
func TestEachStreamsInOrder(t *testing.T) {
	var dirs []string
	for i := range 300 {
		name := fmt.Sprintf("each-%03d", i)
		dirs = append(dirs, writeSkill(t, name, map[string]string{"SKILL.md": validMD(name)}))
	}
	var got []string
	if err := Each(dirs, Options{}, func(r Result) error {
		got = append(got, r.Path)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, dirs) {
		t.Fatalf("order differs: got %d results, first %v", len(got), got[:min(3, len(got))])
	}
	stop := errors.New("stop")
	n := 0
	err := Each(dirs, Options{}, func(Result) error {
		n++
		if n == 10 {
			return stop
		}
		return nil
	})
	if err != stop || n != 10 {
		t.Errorf("err %v after %d calls, want the stop error after 10", err, n)
	}
}

// TestYAMLSpecPlainFirst: YAML 1.2.2, 7.3.3 "Plain Style" (production
// ns-plain-first) and 5.3 "Indicator Characters": a plain scalar may not
// start with any of the indicators - ? : , [ ] { } # & * ! | > ' " % @ `,
// except that "-", "?" and ":" may start one when a safe non-space
// character follows. Each indicator is tried where a value, a list item
// and a key start, and inside a flow list. The indicators that start
// something else (a comment, a block scalar, a quoted scalar, a flow
// collection) must be read as that, not as text; anchors, aliases and
// tags are outside the supported subset and are refused, never read as
// text either.
func TestYAMLSpecPlainFirst(t *testing.T) {
	tests := []struct {
		name string
		in   string // the frontmatter lines
		key  string // "" when the input must be rejected
		want any
	}{
		// Never the first character of a plain scalar (5.3, 7.3.3).
		{"comma value", "d: ,x\n", "", nil},
		{"comma item", "l:\n  - ,x\n", "", nil},
		{"comma key", ",k: v\n", "", nil},
		{"close bracket value", "d: ]x\n", "", nil},
		{"close bracket item", "l:\n  - ]x\n", "", nil},
		{"close bracket key", "]k: v\n", "", nil},
		{"close brace value", "d: }x\n", "", nil},
		{"close brace key", "m:\n  }k: v\n", "", nil},
		{"percent value", "d: %x\n", "", nil},
		{"percent key (directive)", "%k: v\n", "", nil},
		{"at value", "d: @x\n", "", nil},
		{"at key", "m:\n  @k: v\n", "", nil},
		{"at in flow", "t: [a, @b]\n", "", nil},
		{"backtick value", "d: `x`\n", "", nil},
		{"backtick item", "l:\n  - `x`\n", "", nil},
		{"backtick key", "`k`: v\n", "", nil},
		{"percent in flow", "t: [%b]\n", "", nil},
		{"lone at", "d: @\n", "", nil},
		{"lone backtick", "d: `\n", "", nil},
		{"lone comma", "d: ,\n", "", nil},
		// Node properties: outside the subset, refused.
		{"ampersand (anchor)", "d: &a x\n", "", nil},
		{"asterisk (alias)", "d: *a\n", "", nil},
		{"exclamation (tag)", "d: !x y\n", "", nil},
		{"ampersand key", "&a k: v\n", "", nil},
		// "-", "?", ":" followed by a space are indicators, not text, and
		// a block collection cannot start on its key's line.
		{"dash space value", "d: - x\n", "", nil},
		{"dash alone value", "d: -\n", "", nil},
		{"question space value", "d: ? x\n", "", nil},
		{"colon space value", "d: : x\n", "", nil},
		{"colon space item", "l:\n  - : x\n", "", nil},
		{"dash space in flow", "t: [a, - b]\n", "", nil},
		// ... and followed by a safe character they start plain text.
		{"dash value", "d: -foo\n", "d", "-foo"},
		{"question value", "d: ?foo\n", "d", "?foo"},
		{"colon value", "d: :foo\n", "d", ":foo"},
		{"dash item", "l:\n  - -foo\n", "l", []any{"-foo"}},
		{"question item", "l:\n  - ?foo\n", "l", []any{"?foo"}},
		{"colon item", "l:\n  - :foo\n", "l", []any{":foo"}},
		{"dash key", "-k: v\n", "-k", "v"},
		{"question key", "?k: v\n", "?k", "v"},
		{"colon key", ":k: v\n", ":k", "v"},
		{"dash in flow", "t: [-b]\n", "t", []any{"-b"}},
		{"colon in flow", "t: [a, :b]\n", "t", []any{"a", ":b"}},
		{"question in flow", "t: [?b]\n", "t", []any{"?b"}},
		// Example 7.10 "Plain Characters" (outside a flow collection).
		{"7.10 double colon", "l:\n- ::vector\n", "l", []any{"::vector"}},
		{"7.10 quoted colon dash", "l:\n- \": - ()\"\n", "l", []any{": - ()"}},
		{"7.10 commas inside", "l:\n- Up, up, and away!\n", "l", []any{"Up, up, and away!"}},
		{"7.10 negative number", "l:\n- -123\n", "l", []any{"-123"}},
		{"7.10 hash inside", "l:\n- https://example.com/foo#bar\n", "l", []any{"https://example.com/foo#bar"}},
		// Indicators that start something else.
		{"hash starts a comment", "d: #x\n", "d", ""},
		{"hash comment item", "l:\n  - #x\n", "l", []any{""}},
		{"hash ends a continuation", "d: foo\n  #bar\n", "d", "foo"},
		{"pipe block scalar", "d: |\n  x\n", "d", "x\n"},
		{"greater block scalar", "d: >-\n  x\n  y\n", "d", "x y"},
		{"single quote", "d: '#x'\n", "d", "#x"},
		{"double quote", "d: \"&x\"\n", "d", "&x"},
		{"bracket flow list", "d: [a]\n", "d", []any{"a"}},
		{"brace flow map", "d: {a: b}\n", "d", map[string]any{"a": "b"}},
		// After the first character every indicator is text (ns-plain-char),
		// also as the first character of a continuation line.
		{"indicators inside", "d: a,]}&*!|>'\"%@`x\n", "d", "a,]}&*!|>'\"%@`x"},
		{"indicators continue a line", "d: foo\n  %bar @baz ,q\n", "d", "foo %bar @baz ,q"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, err := ParseFrontmatter([]byte("---\n" + tt.in + "---\nbody\n"))
			if tt.key == "" {
				var se *SyntaxError
				if !errors.As(err, &se) || se.Line < 2 {
					t.Fatalf("%q: got %v, want a *SyntaxError on a frontmatter line", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", tt.in, err)
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
