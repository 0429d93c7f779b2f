package prepare

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skill-sandbox/skill-sandbox/internal/lazyre"
)

// maxTOMLDepth bounds the nesting of arrays and inline tables, so a
// hostile file cannot make the reader recurse without limit.
const maxTOMLDepth = 32

// maxTOMLValues bounds the values of a document (a 1 MiB file of "0,"
// would otherwise make half a million).
const maxTOMLValues = 100000

// tomlValue is a value of a TOML document as the subset reader builds it.
type tomlValue struct {
	kind byte // 's' string, 'a' array, 't' table, 'o' another scalar
	str  string
	arr  []*tomlValue
	tab  map[string]*tomlValue
	line int
	// Tables: defined by a [header] (explicit), created by a dotted key
	// (dotted), or an inline table (sealed, closed to extension). Arrays:
	// made by [[header]] (tables).
	explicit, dotted, sealed, tables bool
}

func newTable(line int) *tomlValue {
	return &tomlValue{kind: 't', tab: map[string]*tomlValue{}, line: line}
}

// tomlReader reads the strict TOML subset of parseTOML.
type tomlReader struct {
	file string
	data string
	pos  int
	line int
	n    int // values read
}

func (r *tomlReader) fail(format string, a ...any) error {
	return &LineError{File: r.file, Line: r.line, Reason: fmt.Sprintf(format, a...)}
}

// parseTOML reads data, the bytes of the TOML file named file (for
// errors), into its root table. It reads TOML 1.0 but for: dates and
// times, hexadecimal, octal and binary integers, inf and nan (refused as
// unsupported), and it refuses a few forms TOML allows only in subtle
// orders (a dotted key reaching into a table a [header] defined, a
// [header] re-opening a table dotted keys made). Every refusal names the
// line and the reason.
func parseTOML(file string, data []byte) (*tomlValue, error) {
	r := &tomlReader{file: file, data: string(data), line: 1}
	if !utf8.Valid(data) {
		bad := 0
		for bad < len(data) && utf8.FullRune(data[bad:]) {
			c, n := utf8.DecodeRune(data[bad:])
			if c == utf8.RuneError && n == 1 {
				break
			}
			bad += n
		}
		r.line += strings.Count(r.data[:bad], "\n")
		return nil, r.fail("invalid UTF-8")
	}
	root := newTable(1)
	cur := root
	for {
		r.skipBlank(true)
		if r.pos >= len(r.data) {
			return root, nil
		}
		var err error
		if r.data[r.pos] == '[' {
			cur, err = r.header(root)
		} else {
			err = r.keyValue(cur, 0)
		}
		if err != nil {
			return nil, err
		}
		if err := r.endOfLine(); err != nil {
			return nil, err
		}
	}
}

// skipBlank skips spaces, tabs and comments, and newlines when nl is set.
func (r *tomlReader) skipBlank(nl bool) {
	for r.pos < len(r.data) {
		switch c := r.data[r.pos]; {
		case c == ' ' || c == '\t':
			r.pos++
		case c == '#':
			for r.pos < len(r.data) && r.data[r.pos] != '\n' && r.data[r.pos] != '\r' {
				r.pos++
			}
		case nl && c == '\n':
			r.pos++
			r.line++
		case nl && c == '\r' && strings.HasPrefix(r.data[r.pos:], "\r\n"):
			r.pos += 2
			r.line++
		default:
			return
		}
	}
}

// endOfLine expects only white space and a comment before the line's end.
func (r *tomlReader) endOfLine() error {
	start := r.pos
	r.skipBlank(false)
	for i := start; i < r.pos; i++ {
		if c := r.data[i]; c < ' ' && c != '\t' || c == 0x7f {
			return r.fail("control character in a comment")
		}
	}
	switch {
	case r.pos >= len(r.data):
		return nil
	case r.data[r.pos] == '\n':
		return nil
	case strings.HasPrefix(r.data[r.pos:], "\r\n"):
		return nil
	case r.data[r.pos] == '\r':
		return r.fail("carriage return without a newline")
	}
	return r.fail("unexpected %q after the value: one key = value or [table] per line", r.data[r.pos])
}

// header reads "[a.b]" or "[[a.b]]" and returns the table it opens.
func (r *tomlReader) header(root *tomlValue) (*tomlValue, error) {
	array := strings.HasPrefix(r.data[r.pos:], "[[")
	r.pos++
	if array {
		r.pos++
	}
	keys, err := r.key()
	if err != nil {
		return nil, err
	}
	closing := "]"
	if array {
		closing = "]]"
	}
	if !strings.HasPrefix(r.data[r.pos:], closing) {
		return nil, r.fail("want %q to close the table header", closing)
	}
	r.pos += len(closing)
	t := root
	for _, k := range keys[:len(keys)-1] {
		if t, err = r.descend(t, k, false); err != nil {
			return nil, err
		}
	}
	last := keys[len(keys)-1]
	v := t.tab[last]
	switch {
	case array && v == nil:
		v = &tomlValue{kind: 'a', tables: true, line: r.line}
		t.tab[last] = v
		fallthrough
	case array && v.kind == 'a' && v.tables:
		nt := newTable(r.line)
		nt.explicit = true
		v.arr = append(v.arr, nt)
		return nt, nil
	case array:
		return nil, r.fail("[[%s]]: %s is already defined on line %d, not as an array of tables", strings.Join(keys, "."), last, v.line)
	case v == nil:
		nt := newTable(r.line)
		nt.explicit = true
		t.tab[last] = nt
		return nt, nil
	case v.kind == 't' && !v.explicit && !v.dotted && !v.sealed:
		v.explicit = true // made implicitly by an earlier [a.b.c]
		return v, nil
	}
	return nil, r.fail("[%s]: already defined on line %d", strings.Join(keys, "."), v.line)
}

// descend returns the table under key k of t, creating it when missing;
// dotted says a dotted key (not a header) names it.
func (r *tomlReader) descend(t *tomlValue, k string, dotted bool) (*tomlValue, error) {
	v := t.tab[k]
	switch {
	case v == nil:
		v = newTable(r.line)
		v.dotted = dotted
		t.tab[k] = v
		return v, nil
	case v.kind == 't' && !v.sealed && (!dotted || v.dotted && !v.explicit):
		return v, nil
	case v.kind == 'a' && v.tables && !dotted:
		return v.arr[len(v.arr)-1], nil
	}
	return nil, r.fail("%s is already defined on line %d and cannot be extended here", k, v.line)
}

// keyValue reads "key = value" into t.
func (r *tomlReader) keyValue(t *tomlValue, depth int) error {
	line := r.line
	keys, err := r.key()
	if err != nil {
		return err
	}
	if r.pos >= len(r.data) || r.data[r.pos] != '=' {
		return r.fail("want = after the key %s", strings.Join(keys, "."))
	}
	r.pos++
	r.skipBlank(false)
	for _, k := range keys[:len(keys)-1] {
		if t, err = r.descend(t, k, true); err != nil {
			return err
		}
	}
	last := keys[len(keys)-1]
	if prev, dup := t.tab[last]; dup {
		return r.fail("%s is already defined on line %d", last, prev.line)
	}
	v, err := r.value(depth)
	if err != nil {
		return err
	}
	v.line = line
	t.tab[last] = v
	return nil
}

var bareKeyRE = &lazyre.Regexp{Expr: `^[A-Za-z0-9_-]+`}

// key reads a dotted key and the blanks after it.
func (r *tomlReader) key() ([]string, error) {
	var keys []string
	for {
		r.skipSpace()
		var k string
		switch {
		case r.pos >= len(r.data):
			return nil, r.fail("want a key")
		case r.data[r.pos] == '"' && !strings.HasPrefix(r.data[r.pos:], `"""`):
			s, err := r.basicString()
			if err != nil {
				return nil, err
			}
			k = s
		case r.data[r.pos] == '\'' && !strings.HasPrefix(r.data[r.pos:], `'''`):
			s, err := r.literalString()
			if err != nil {
				return nil, err
			}
			k = s
		default:
			k = bareKeyRE.Get().FindString(r.data[r.pos:])
			if k == "" {
				return nil, r.fail("want a key (letters, digits, _ and -, or quoted), got %q", r.data[r.pos])
			}
			r.pos += len(k)
		}
		keys = append(keys, k)
		r.skipSpace()
		if r.pos >= len(r.data) || r.data[r.pos] != '.' {
			return keys, nil
		}
		r.pos++
	}
}

func (r *tomlReader) skipSpace() {
	for r.pos < len(r.data) && (r.data[r.pos] == ' ' || r.data[r.pos] == '\t') {
		r.pos++
	}
}

var (
	tomlIntRE   = &lazyre.Regexp{Expr: `^[+-]?(0|[1-9](_?[0-9])*)$`}
	tomlFloatRE = &lazyre.Regexp{Expr: `^[+-]?(0|[1-9](_?[0-9])*)(\.[0-9](_?[0-9])*)?([eE][+-]?[0-9](_?[0-9])*)?$`}
	tomlWordRE  = &lazyre.Regexp{Expr: `^[A-Za-z0-9_+.:-]+`}
)

// value reads one value; depth counts the arrays and inline tables it is in.
func (r *tomlReader) value(depth int) (*tomlValue, error) {
	if depth >= maxTOMLDepth {
		return nil, r.fail("arrays and inline tables nested deeper than %d", maxTOMLDepth)
	}
	if r.pos >= len(r.data) {
		return nil, r.fail("want a value")
	}
	if r.n++; r.n > maxTOMLValues {
		return nil, r.fail("more than %d values", maxTOMLValues)
	}
	line := r.line
	switch c := r.data[r.pos]; {
	case c == '"' || c == '\'':
		s, err := r.string()
		return &tomlValue{kind: 's', str: s, line: line}, err
	case c == '[':
		return r.array(depth + 1)
	case c == '{':
		return r.inlineTable(depth + 1)
	}
	w := tomlWordRE.Get().FindString(r.data[r.pos:])
	switch {
	case w == "true" || w == "false" || tomlIntRE.Get().MatchString(w) || tomlFloatRE.Get().MatchString(w) && strings.ContainsAny(w, ".eE"):
		r.pos += len(w)
		return &tomlValue{kind: 'o', str: w, line: line}, nil
	case w == "":
		return nil, r.fail("want a value, got %q", r.data[r.pos])
	}
	return nil, r.fail("value %q: dates, times, hexadecimal, octal and binary integers, inf and nan are not supported", clip(w))
}

// array reads "[v, v, ...]", over lines, a trailing comma allowed.
func (r *tomlReader) array(depth int) (*tomlValue, error) {
	a := &tomlValue{kind: 'a', line: r.line}
	r.pos++
	for {
		r.skipBlank(true)
		if r.pos < len(r.data) && r.data[r.pos] == ']' {
			r.pos++
			return a, nil
		}
		v, err := r.value(depth)
		if err != nil {
			return nil, err
		}
		if v.kind == 't' {
			v.sealed = true
		}
		a.arr = append(a.arr, v)
		r.skipBlank(true)
		switch {
		case r.pos >= len(r.data):
			return nil, r.fail("unclosed array")
		case r.data[r.pos] == ',':
			r.pos++
		case r.data[r.pos] != ']':
			return nil, r.fail("want , or ] in the array, got %q", r.data[r.pos])
		}
	}
}

// inlineTable reads "{k = v, ...}" on one line, no trailing comma.
func (r *tomlReader) inlineTable(depth int) (*tomlValue, error) {
	t := newTable(r.line)
	r.pos++
	r.skipSpace()
	if r.pos < len(r.data) && r.data[r.pos] == '}' {
		r.pos++
		t.sealed = true
		return t, nil
	}
	for {
		if err := r.keyValue(t, depth); err != nil {
			return nil, err
		}
		r.skipSpace()
		switch {
		case r.pos >= len(r.data):
			return nil, r.fail("unclosed inline table")
		case r.data[r.pos] == '}':
			r.pos++
			sealAll(t)
			return t, nil
		case r.data[r.pos] != ',':
			return nil, r.fail("want , or } in the inline table (on one line), got %q", r.data[r.pos])
		}
		r.pos++
	}
}

// sealAll closes an inline table and the tables its dotted keys made.
func sealAll(t *tomlValue) {
	t.sealed = true
	for _, v := range t.tab {
		if v.kind == 't' {
			sealAll(v)
		}
	}
}
