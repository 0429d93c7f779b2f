package audit

import (
	"strings"
	"unicode/utf8"
)

// EscapeInvalid returns s unchanged when it is valid UTF-8. Otherwise each
// byte that is not part of a valid sequence is written as \xNN and each
// backslash as \\, so that the name stays distinct from every other: JSON
// would replace those bytes with U+FFFD, and then a record could not tell
// "a\xff.sh" from a file really named "a\uFFFD.sh". The records use it,
// and so do list and validate for the names they print.
func EscapeInvalid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// escapeAll applies EscapeInvalid to each string of ss, in a copy.
func escapeAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = EscapeInvalid(s)
	}
	return out
}

// escapeNames applies EscapeInvalid to every field that holds a name or a
// message built from names (paths, script, args, interpreter, errors).
func (r *Record) escapeNames() {
	r.Message = EscapeInvalid(r.Message)
	r.Skill.Name = EscapeInvalid(r.Skill.Name)
	r.Skill.Path = EscapeInvalid(r.Skill.Path)
	r.Skill.DigestError = EscapeInvalid(r.Skill.DigestError)
	r.Script = EscapeInvalid(r.Script)
	r.Interpreter = escapeAll(r.Interpreter)
	r.Args = escapeAll(r.Args)
	r.WorkDir = EscapeInvalid(r.WorkDir)
	r.Error = EscapeInvalid(r.Error)
	r.Validation.Errors = escapeAll(r.Validation.Errors)
	r.Validation.Warnings = escapeAll(r.Validation.Warnings)
	for i, m := range r.Layers.Missing {
		r.Layers.Missing[i].Reason = EscapeInvalid(m.Reason)
	}
}
