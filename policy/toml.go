package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxSize is the largest policy file accepted, in bytes. A policy is a few
// dozen lines; the cap bounds the parser's memory and time on hostile input.
const MaxSize = 64 << 10

// Error is a problem in a policy file, at a 1-based line and column
// (counted in characters). Line and Col are 0 when the problem is not tied
// to a place, such as a file too large to read.
type Error struct {
	File string
	Line int
	Col  int
	Msg  string
}

// Error formats e as "file:line:col: msg", leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// The kinds of value the TOML subset knows.
type kind int

const (
	kindString kind = iota + 1
	kindInteger
	kindBoolean
	kindStrings // array of strings
)

func (k kind) String() string {
	switch k {
	case kindString:
		return "a string"
	case kindInteger:
		return "an integer"
	case kindBoolean:
		return "a boolean"
	case kindStrings:
		return "an array of strings"
	}
	return "a value"
}

// value is one parsed TOML value; off is its byte offset in the source.
type value struct {
	kind kind
	off  int
	str  string
	num  int64
	b    bool
	list []string
	offs []int // offsets of list's elements
}

// entry is one key = value line.
type entry struct {
	key    string
	keyOff int
	val    value
}

// table is the root table (name "", hdrOff -1) or one [name] table, with
// its entries in file order.
type table struct {
	name    string
	hdrOff  int
	entries []entry
}

// document is a parsed TOML file: the root table first, then every [table]
// in file order. src is kept to turn offsets into lines and columns.
type document struct {
	file   string
	src    []byte
	tables []*table
}

// errAt returns an *Error for the byte offset off of src.
func errAt(file string, src []byte, off int, format string, a ...any) *Error {
	line, col := 1, 1
	if off > len(src) {
		off = len(src)
	}
	start := 0
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			line++
			start = i + 1
		}
	}
	col = utf8.RuneCount(src[start:off]) + 1
	return &Error{File: file, Line: line, Col: col, Msg: fmt.Sprintf(format, a...)}
}

// toml parses the TOML subset a policy uses. It accepts, per TOML 1.0:
// [table] headers with a bare or quoted name; key = value lines with a bare
// or quoted key; basic strings with the TOML escapes, literal strings;
// decimal integers with underscores between digits; true and false; arrays
// of strings over several lines with comments and a trailing comma; comments;
// LF and CRLF line ends; a leading UTF-8 byte order mark. It rejects, with
// the position and a reason: everything else TOML has (floats, dates and
// times, inline tables, arrays of tables, dotted keys and table names,
// multi-line strings, hexadecimal, octal and binary integers, arrays of
// anything but strings), duplicate keys and tables, invalid UTF-8, control
// characters, and input larger than MaxSize. Which tables and keys exist is
// checked by the schema, not here.
type tomlParser struct {
	file string
	src  []byte
	off  int
	doc  *document
	cur  *table
	seen map[string]bool // table names already defined
	keys map[*table]map[string]bool
}

// parseTOML parses src; file names it in errors.
func parseTOML(file string, src []byte) (*document, error) {
	if len(src) > MaxSize {
		// ParseFile reads one byte past the cap, not the whole file, so
		// the true size is unknown here.
		return nil, &Error{File: file, Msg: fmt.Sprintf("file is larger than %d bytes, the most a policy may be", MaxSize)}
	}
	if !utf8.Valid(src) {
		bad := 0
		for bad < len(src) {
			r, n := utf8.DecodeRune(src[bad:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			bad += n
		}
		return nil, errAt(file, src, bad, "invalid UTF-8")
	}
	root := &table{hdrOff: -1}
	p := &tomlParser{
		file: file,
		src:  src,
		doc:  &document{file: file, src: src, tables: []*table{root}},
		cur:  root,
		seen: map[string]bool{},
		keys: map[*table]map[string]bool{root: {}},
	}
	if strings.HasPrefix(string(src), "\ufeff") {
		p.off = 3
	}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.doc, nil
}

func (p *tomlParser) parse() error {
	for !p.eof() {
		p.skipSpace()
		switch c := p.peek(); {
		case p.eof():
		case c == '#':
			if err := p.comment(); err != nil {
				return err
			}
		case c == '\n' || c == '\r':
			if err := p.newline(); err != nil {
				return err
			}
		case c == '[':
			if err := p.tableHeader(); err != nil {
				return err
			}
		default:
			if err := p.keyValue(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *tomlParser) tableHeader() error {
	start := p.off
	p.off++ // '['
	if p.peek() == '[' {
		return p.errorf(start, "arrays of tables ([[...]]) are not supported")
	}
	p.skipSpace()
	name, err := p.key()
	if err != nil {
		return err
	}
	p.skipSpace()
	if p.peek() == '.' {
		return p.errorf(p.off, "dotted table names are not supported; use a single [name]")
	}
	if p.peek() != ']' {
		return p.errorf(p.off, "unexpected %s in a table header; want ']'", p.describe(p.off))
	}
	p.off++
	if p.seen[name] {
		return p.errorf(start, "table [%s] is defined twice", name)
	}
	p.seen[name] = true
	t := &table{name: name, hdrOff: start}
	p.doc.tables = append(p.doc.tables, t)
	p.keys[t] = map[string]bool{}
	p.cur = t
	return p.endOfLine("the table header")
}

// key parses a bare or quoted key.
func (p *tomlParser) key() (string, error) {
	start := p.off
	switch p.peek() {
	case '"', '\'':
		if p.off+2 < len(p.src) && p.src[p.off+1] == p.src[p.off] && p.src[p.off+2] == p.src[p.off] {
			return "", p.errorf(start, "a multi-line string cannot be a key")
		}
		if p.peek() == '"' {
			return p.basicString()
		}
		return p.literalString()
	}
	for !p.eof() && isBare(p.src[p.off]) {
		p.off++
	}
	if p.off == start {
		return "", p.errorf(start, "unexpected %s; want a key", p.describe(start))
	}
	return string(p.src[start:p.off]), nil
}

func (p *tomlParser) keyValue() error {
	keyOff := p.off
	k, err := p.key()
	if err != nil {
		return err
	}
	p.skipSpace()
	switch p.peek() {
	case '.':
		return p.errorf(p.off, "dotted keys are not supported; put the key in its [table]")
	case '=':
		p.off++
	default:
		return p.errorf(p.off, "unexpected %s after key %q; want '='", p.describe(p.off), k)
	}
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return err
	}
	if p.keys[p.cur][k] {
		return p.errorf(keyOff, "key %q is defined twice in %s", k, tableName(p.cur.name, p.cur.hdrOff))
	}
	p.keys[p.cur][k] = true
	p.cur.entries = append(p.cur.entries, entry{key: k, keyOff: keyOff, val: v})
	return p.endOfLine("the value")
}

// tableName names a table in a message.
func tableName(name string, hdrOff int) string {
	if hdrOff < 0 {
		return "the top level"
	}
	return "[" + name + "]"
}
