package stageconfig

import (
	"io"
	"unicode/utf8"
)

// appendReportJSON appends rep as encoding/json would marshal it (field
// names as declared, empty fields left out), and a newline. The init process
// writes its layer report with it: the first json.Marshal of a process
// builds its encoders by reflection, 50 to 100 µs of every sandboxed start
// for one small struct. TestReportJSON and FuzzReportJSON compare it with
// encoding/json.
func appendReportJSON(b []byte, rep Report) []byte {
	b = append(b, '{')
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, name)
		b = append(b, ':')
	}
	if len(rep.Applied) > 0 {
		field("Applied")
		b = append(b, '[')
		for i, l := range rep.Applied {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, string(l))
		}
		b = append(b, ']')
	}
	for _, list := range []struct {
		name string
		ms   []Missing
	}{{"Missing", rep.Missing}, {"Incomplete", rep.Incomplete}} {
		if len(list.ms) == 0 {
			continue
		}
		field(list.name)
		b = append(b, '[')
		for i, m := range list.ms {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"Layer":`...)
			b = appendJSONString(b, string(m.Layer))
			b = append(b, `,"Reason":`...)
			b = appendJSONString(b, m.Reason)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if rep.Changed != "" {
		field("Changed")
		b = appendJSONString(b, rep.Changed)
	}
	if rep.Prebuilt {
		field("Prebuilt")
		b = append(b, "true"...)
	}
	if rep.ExecError != "" {
		field("ExecError")
		b = appendJSONString(b, rep.ExecError)
	}
	if rep.Fatal != "" {
		field("Fatal")
		b = appendJSONString(b, rep.Fatal)
	}
	return append(b, '}', '\n')
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, bytes that are not UTF-8 replaced by U+FFFD,
// as encoding/json does.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// WriteReport writes one JSON line in a single write.
func WriteReport(w io.Writer, rep Report) error {
	_, err := w.Write(appendReportJSON(nil, rep))
	return err
}
