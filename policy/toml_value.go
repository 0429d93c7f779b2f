package policy

import (
	"fmt"
	"strconv"
	"strings"
)

func (p *tomlParser) value() (value, error) {
	start := p.off
	switch c := p.peek(); {
	case c == '"' || c == '\'':
		if p.off+2 < len(p.src) && p.src[p.off+1] == c && p.src[p.off+2] == c {
			return value{}, p.errorf(start, "multi-line strings are not supported")
		}
		var s string
		var err error
		if c == '"' {
			s, err = p.basicString()
		} else {
			s, err = p.literalString()
		}
		return value{kind: kindString, off: start, str: s}, err
	case c == '[':
		return p.array()
	case c == '{':
		return value{}, p.errorf(start, "inline tables are not supported")
	case p.eof() || c == '\n' || c == '\r' || c == '#':
		return value{}, p.errorf(start, "missing value after '='")
	}
	// A bare token: boolean, integer, or something unsupported.
	for !p.eof() && isToken(p.src[p.off]) {
		p.off++
	}
	tok := string(p.src[start:p.off])
	switch tok {
	case "true", "false":
		return value{kind: kindBoolean, off: start, b: tok == "true"}, nil
	case "":
		return value{}, p.errorf(start, "unexpected %s; want a value (string, integer, boolean or array of strings)", p.describe(start))
	}
	n, err := parseInt(tok)
	if err != nil {
		return value{}, p.errorf(start, "%s", err)
	}
	return value{kind: kindInteger, off: start, num: n}, nil
}

func isToken(c byte) bool {
	return isBare(c) || c == '+' || c == '.' || c == ':'
}

// parseInt parses a TOML decimal integer, or says why tok is not one.
func parseInt(tok string) (int64, error) {
	digits := strings.TrimLeft(tok, "+-")
	lower := strings.ToLower(tok)
	switch {
	case len(tok)-len(digits) > 1:
		return 0, fmt.Errorf("unexpected %q; want a value (strings must be quoted)", tok)
	case strings.HasPrefix(digits, "0x") || strings.HasPrefix(digits, "0o") || strings.HasPrefix(digits, "0b"):
		return 0, fmt.Errorf("hexadecimal, octal and binary integers are not supported: %q", tok)
	case strings.Contains(tok, ":") || strings.ContainsAny(tok, "TZtz") && tok[0] >= '0' && tok[0] <= '9' ||
		strings.Contains(tok[1:], "-") && !strings.ContainsAny(lower, "e"):
		return 0, fmt.Errorf("dates and times are not supported: %q", tok)
	case strings.ContainsAny(tok, ".eE") && (tok[0] >= '0' && tok[0] <= '9' || tok[0] == '+' || tok[0] == '-') ||
		strings.HasSuffix(lower, "inf") || strings.HasSuffix(lower, "nan"):
		return 0, fmt.Errorf("floats are not supported: %q", tok)
	}
	if len(digits) == 0 {
		return 0, fmt.Errorf("unexpected %q; want a value (strings must be quoted)", tok)
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		switch {
		case c >= '0' && c <= '9':
		case c == '_':
			if i == 0 || i == len(digits)-1 || digits[i-1] == '_' {
				return 0, fmt.Errorf("underscore in %q must sit between two digits", tok)
			}
		default:
			return 0, fmt.Errorf("unexpected %q; want a value (strings must be quoted)", tok)
		}
	}
	if len(digits) > 1 && digits[0] == '0' {
		return 0, fmt.Errorf("leading zeros are not allowed in %q", tok)
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(tok, "_", ""), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("integer %q is out of range", tok)
	}
	return n, nil
}

// array parses an array of strings, over several lines if need be.
func (p *tomlParser) array() (value, error) {
	v := value{kind: kindStrings, off: p.off, list: []string{}}
	p.off++ // '['
	for {
		if err := p.skipBlank(); err != nil {
			return v, err
		}
		if p.peek() == ']' {
			p.off++
			return v, nil
		}
		start := p.off
		switch c := p.peek(); c {
		case '"', '\'':
			s, err := p.value()
			if err != nil {
				return v, err
			}
			v.list = append(v.list, s.str)
			v.offs = append(v.offs, start)
		case '[':
			return v, p.errorf(start, "nested arrays are not supported")
		case 0:
			if p.eof() {
				return v, p.errorf(start, "unterminated array; want ']'")
			}
			fallthrough
		default:
			if _, err := p.value(); err != nil {
				return v, err
			}
			return v, p.errorf(start, "arrays may hold only strings")
		}
		if err := p.skipBlank(); err != nil {
			return v, err
		}
		switch p.peek() {
		case ',':
			p.off++
		case ']':
			p.off++
			return v, nil
		default:
			if p.eof() {
				return v, p.errorf(p.off, "unterminated array; want ']'")
			}
			return v, p.errorf(p.off, "unexpected %s in an array; want ',' or ']'", p.describe(p.off))
		}
	}
}
