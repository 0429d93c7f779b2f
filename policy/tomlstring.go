package policy

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The string forms of the TOML subset: basic strings with escapes and
// literal strings, both on one line.

// basicString parses "..." with TOML's escapes.
func (p *tomlParser) basicString() (string, error) {
	start := p.off
	p.off++ // '"'
	var b strings.Builder
	for {
		if p.eof() || p.peek() == '\n' || p.peek() == '\r' {
			return "", p.errorf(start, "unterminated string")
		}
		r, n := utf8.DecodeRune(p.src[p.off:])
		switch {
		case r == '"':
			p.off++
			return b.String(), nil
		case r == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
			continue
		case isControl(r):
			return "", p.errorf(p.off, "control character U+%04X in a string must be escaped", r)
		}
		b.WriteRune(r)
		p.off += n
	}
}

// escape decodes one escape sequence at p.off into b.
func (p *tomlParser) escape(b *strings.Builder) error {
	start := p.off
	p.off++ // '\\'
	if p.eof() {
		return p.errorf(start, "unterminated string")
	}
	c := p.src[p.off]
	p.off++
	width := 0
	switch c {
	case 'b':
		b.WriteByte('\b')
		return nil
	case 't':
		b.WriteByte('\t')
		return nil
	case 'n':
		b.WriteByte('\n')
		return nil
	case 'f':
		b.WriteByte('\f')
		return nil
	case 'r':
		b.WriteByte('\r')
		return nil
	case '"', '\\':
		b.WriteByte(c)
		return nil
	case 'u':
		width = 4
	case 'U':
		width = 8
	default:
		return p.errorf(start, "invalid escape sequence \\%s", p.describe(p.off-1))
	}
	if p.off+width > len(p.src) {
		return p.errorf(start, "escape \\%c needs %d hexadecimal digits", c, width)
	}
	hex := string(p.src[p.off : p.off+width])
	n, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || strings.ContainsAny(hex, "+-_") {
		return p.errorf(start, "escape \\%c needs %d hexadecimal digits", c, width)
	}
	r := rune(n)
	if n > utf8.MaxRune || r >= 0xd800 && r <= 0xdfff {
		return p.errorf(start, "escape \\%c%s is not a Unicode scalar value", c, hex)
	}
	p.off += width
	b.WriteRune(r)
	return nil
}

// literalString parses '...' (no escapes).
func (p *tomlParser) literalString() (string, error) {
	start := p.off
	p.off++ // '\''
	for {
		if p.eof() || p.peek() == '\n' || p.peek() == '\r' {
			return "", p.errorf(start, "unterminated string")
		}
		r, n := utf8.DecodeRune(p.src[p.off:])
		if r == '\'' {
			s := string(p.src[start+1 : p.off])
			p.off++
			return s, nil
		}
		if isControl(r) {
			return "", p.errorf(p.off, "control character U+%04X in a string", r)
		}
		p.off += n
	}
}
