package policy

import (
	"strconv"
	"unicode/utf8"
)

func (p *tomlParser) errorf(off int, format string, a ...any) error {
	return errAt(p.file, p.src, off, format, a...)
}

func (p *tomlParser) eof() bool { return p.off >= len(p.src) }

func (p *tomlParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.src[p.off]
}

// describe names the character at off for an error message.
func (p *tomlParser) describe(off int) string {
	if off >= len(p.src) {
		return "end of file"
	}
	switch c := p.src[off]; c {
	case '\n', '\r':
		return "end of line"
	default:
		r, _ := utf8.DecodeRune(p.src[off:])
		return strconv.QuoteRune(r)
	}
}

func (p *tomlParser) skipSpace() {
	for !p.eof() && (p.src[p.off] == ' ' || p.src[p.off] == '\t') {
		p.off++
	}
}

// skipBlank skips space, line ends and comments inside an array.
func (p *tomlParser) skipBlank() error {
	for !p.eof() {
		switch p.src[p.off] {
		case ' ', '\t':
			p.off++
		case '\n', '\r':
			if err := p.newline(); err != nil {
				return err
			}
		case '#':
			if err := p.comment(); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

// newline consumes LF or CRLF at p.off.
func (p *tomlParser) newline() error {
	if p.peek() == '\r' {
		if p.off+1 >= len(p.src) || p.src[p.off+1] != '\n' {
			return p.errorf(p.off, "carriage return without a line feed")
		}
		p.off++
	}
	p.off++
	return nil
}

// isControl reports whether r may not appear literally in a string or a
// comment: TOML allows tab but no other control character.
func isControl(r rune) bool {
	return r < 0x20 && r != '\t' || r == 0x7f
}

// comment consumes a comment up to (not including) its line end.
func (p *tomlParser) comment() error {
	for !p.eof() {
		c := p.src[p.off]
		if c == '\n' || c == '\r' {
			return nil
		}
		if isControl(rune(c)) {
			return p.errorf(p.off, "control character U+%04X in a comment", c)
		}
		p.off++
	}
	return nil
}

// endOfLine consumes optional space and comment, then the line end.
func (p *tomlParser) endOfLine(what string) error {
	p.skipSpace()
	if p.peek() == '#' {
		if err := p.comment(); err != nil {
			return err
		}
	}
	if p.eof() {
		return nil
	}
	if c := p.peek(); c != '\n' && c != '\r' {
		return p.errorf(p.off, "unexpected %s after %s; want a new line", p.describe(p.off), what)
	}
	return p.newline()
}

func isBare(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
