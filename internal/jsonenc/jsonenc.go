// Package jsonenc writes JSON strings and numbers exactly as encoding/json
// does, for the hand-written encoders of the audit record and the
// canonical policy. Those are written once by a CLI call that then exits,
// and encoding/json's first use of a struct type analyses it by
// reflection (every field, tag and nested type): about 0.1-0.2 ms per
// type tree, where writing the JSON takes microseconds.
package jsonenc

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// ErrUnsupportedFloat is the error of a NaN or infinite number, which JSON
// cannot hold (encoding/json refuses them too).
var ErrUnsupportedFloat = errors.New("json: unsupported value: NaN or infinity")

// AppendFloat appends f as encoding/json writes a float64: the shortest
// decimal that reads back as f, in exponent form only below 1e-6 or from
// 1e21 on, with a one-digit negative exponent written without its zero
// (1e-7, not 1e-07).
func AppendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, ErrUnsupportedFloat
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// AppendString appends s as a JSON string the way encoding/json does:
// quotes and backslashes escaped, \b \f \n \r \t by their short forms and
// the other controls below U+0020 as \u00XX, U+2028 and U+2029 as \u2028
// and \u2029 (JavaScript reads them as line ends), invalid UTF-8 as
// \ufffd, everything else (DEL included) as is. With escapeHTML, as
// json.Marshal, "<", ">" and "&" are written \u003c, \u003e and \u0026;
// without, as a json.Encoder after SetEscapeHTML(false).
func AppendString(b []byte, s string, escapeHTML bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!escapeHTML || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendStrings appends ss as a JSON array of AppendString's strings, or
// null when ss is nil, as encoding/json writes a []string.
func AppendStrings(b []byte, ss []string, escapeHTML bool) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, s, escapeHTML)
	}
	return append(b, ']')
}

// AppendKey appends `"key":`, after a comma unless the key is its
// object's first. Keys are the encoders' own field names, plain ASCII
// that needs no escaping.
func AppendKey(b []byte, key string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}
