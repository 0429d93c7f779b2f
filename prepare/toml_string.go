package prepare

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// string reads a basic, literal or multi-line string.
func (r *tomlReader) string() (string, error) {
	switch {
	case strings.HasPrefix(r.data[r.pos:], `"""`):
		return r.multiline(`"""`)
	case strings.HasPrefix(r.data[r.pos:], `'''`):
		return r.multiline(`'''`)
	case r.data[r.pos] == '"':
		return r.basicString()
	}
	return r.literalString()
}

// literalString reads '...': no escapes, one line.
func (r *tomlReader) literalString() (string, error) {
	end := strings.IndexByte(r.data[r.pos+1:], '\'')
	if end < 0 {
		return "", r.fail("unclosed string")
	}
	s := r.data[r.pos+1 : r.pos+1+end]
	if bad := badStringChar(s, false); bad != "" {
		return "", r.fail("%s in a string", bad)
	}
	r.pos += end + 2
	return s, nil
}

// basicString reads "...": escapes, one line.
func (r *tomlReader) basicString() (string, error) {
	var b strings.Builder
	i := r.pos + 1
	for {
		if i >= len(r.data) || r.data[i] == '\n' {
			return "", r.fail("unclosed string")
		}
		switch c := r.data[i]; c {
		case '"':
			r.pos = i + 1
			return b.String(), nil
		case '\\':
			n, err := r.escape(&b, i)
			if err != nil {
				return "", err
			}
			i += n
			continue
		default:
			if bad := badStringChar(string(c), false); bad != "" {
				return "", r.fail("%s in a string", bad)
			}
			b.WriteByte(c)
		}
		i++
	}
}

// escape writes the escape at data[i] ("\n", "\u00e9", ...) to b and
// returns its length.
func (r *tomlReader) escape(b *strings.Builder, i int) (int, error) {
	if i+1 >= len(r.data) {
		return 0, r.fail("unfinished escape")
	}
	simple := map[byte]byte{'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r', '"': '"', '\\': '\\'}
	if c, ok := simple[r.data[i+1]]; ok {
		b.WriteByte(c)
		return 2, nil
	}
	digits := map[byte]int{'u': 4, 'U': 8}[r.data[i+1]]
	if digits == 0 || i+2+digits > len(r.data) {
		return 0, r.fail("escape %q is not one of \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX \\UXXXXXXXX", clip(r.data[i:min(i+2, len(r.data))]))
	}
	hex := r.data[i+2 : i+2+digits]
	n, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || strings.ContainsAny(hex, "+-_") || !utf8.ValidRune(rune(n)) {
		return 0, r.fail("escape \\%c%s is not a Unicode scalar value", r.data[i+1], clip(hex))
	}
	b.WriteRune(rune(n))
	return 2 + digits, nil
}

// multiline reads a multi-line string, quote being its tripled quote.
func (r *tomlReader) multiline(quote string) (string, error) {
	i := r.pos + 3
	if strings.HasPrefix(r.data[i:], "\n") {
		i, r.line = i+1, r.line+1
	} else if strings.HasPrefix(r.data[i:], "\r\n") {
		i, r.line = i+2, r.line+1
	}
	var b strings.Builder
	for {
		if i >= len(r.data) {
			return "", r.fail("unclosed multi-line string")
		}
		if strings.HasPrefix(r.data[i:], quote) {
			// Up to two more quotes belong to the string ("""a"""").
			extra := 0
			for extra < 2 && i+3+extra < len(r.data) && r.data[i+3+extra] == quote[0] {
				extra++
			}
			b.WriteString(r.data[i : i+extra])
			r.pos = i + 3 + extra
			return b.String(), nil
		}
		c := r.data[i]
		switch {
		case c == '\\' && quote == `"""`:
			if j := lineEndingBackslash(r.data, i); j > 0 {
				r.line += strings.Count(r.data[i:j], "\n")
				i = j
				continue
			}
			n, err := r.escape(&b, i)
			if err != nil {
				return "", err
			}
			i += n
			continue
		case c == '\n':
			r.line++
		case c == '\r' && strings.HasPrefix(r.data[i:], "\r\n"):
		default:
			if bad := badStringChar(string(c), false); bad != "" {
				return "", r.fail("%s in a string", bad)
			}
		}
		b.WriteByte(c)
		i++
	}
}

// lineEndingBackslash returns, for a "\" at data[i] followed by blanks
// and a newline, the index of the first character after the blanks and
// newlines that follow; 0 otherwise.
func lineEndingBackslash(data string, i int) int {
	j := i + 1
	for j < len(data) && (data[j] == ' ' || data[j] == '\t') {
		j++
	}
	if j >= len(data) || !(data[j] == '\n' || strings.HasPrefix(data[j:], "\r\n")) {
		return 0
	}
	for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || strings.HasPrefix(data[j:], "\r\n")) {
		j++
	}
	return j
}

// badStringChar names a control character of s TOML refuses in a string
// (all but tab; newlines only in multi-line ones), or "".
func badStringChar(s string, newlines bool) string {
	for _, c := range []byte(s) {
		if c < ' ' && c != '\t' && !(newlines && c == '\n') || c == 0x7f {
			return fmt.Sprintf("control character %q", c)
		}
	}
	return ""
}
