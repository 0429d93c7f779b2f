package validate

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible escapes what a hostile skill could use to rewrite a report on a
// terminal or in a CI log viewer that renders ANSI: file names, frontmatter
// keys and the text a finding quotes are the skill's own bytes. C0
// controls (ESC, CR, newline), DEL, C1 controls and bytes that are not
// UTF-8 become \xNN; Unicode format characters (bidi controls, zero-width
// characters, tag characters) and line and paragraph separators become
// \uNNNN or \UNNNNNNNN, so a message reads as what it is.
func Visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r < 0x20, r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r >= 0x80 && r <= 0x9f, unicode.Is(unicode.Cf, r), r == 0x2028, r == 0x2029:
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
