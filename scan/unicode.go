package scan

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// hiddenKind classifies a rune that changes how text reads without being
// seen: "bidi", "zero-width" or "tag"; "" for anything else.
func hiddenKind(r rune) string {
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return "bidi"
	case r >= 0x200B && r <= 0x200D, r >= 0x2060 && r <= 0x2064, r == 0xFEFF:
		return "zero-width"
	case r >= 0xE0000 && r <= 0xE007F:
		return "tag"
	}
	return ""
}

// visibleNonASCII reports whether r is a visible character outside ASCII,
// the kind a zero-width joiner legitimately sits between.
func visibleNonASCII(r rune) bool {
	return r > 0x7F && r != utf8.RuneError && hiddenKind(r) == ""
}

// checkHidden reports hidden characters in one line. first says whether
// the line starts the file (a leading BOM is allowed there).
func checkHidden(line string, first bool, add func(Severity, string)) {
	var runes []rune
	for i, r := range line {
		if i == 0 && first && r == 0xFEFF {
			runes = append(runes, ' ') // a BOM, allowed: keep indexes simple
			continue
		}
		runes = append(runes, r)
	}
	counts := map[string]int{}
	var firstOf = map[string]rune{}
	var hiddenText strings.Builder
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		kind := hiddenKind(r)
		if kind == "" {
			continue
		}
		switch {
		case (r == 0x200C || r == 0x200D) && i > 0 && i+1 < len(runes) && visibleNonASCII(runes[i-1]) && visibleNonASCII(runes[i+1]):
			continue // emoji ZWJ sequences, Indic and Arabic scripts
		case kind == "tag" && flagSequence(runes, i):
			// A subdivision flag: U+1F3F4, tag letters, U+E007F.
			for i < len(runes) && runes[i] != 0xE007F {
				i++
			}
			continue
		}
		counts[kind]++
		if _, ok := firstOf[kind]; !ok {
			firstOf[kind] = r
		}
		if kind == "tag" && r >= 0xE0020 && r <= 0xE007E {
			hiddenText.WriteRune(r - 0xE0000)
		}
	}
	if n := counts["tag"]; n > 0 {
		add(Critical, fmt.Sprintf("%d Unicode tag characters (invisible), spelling %q", n, truncate(hiddenText.String(), 80)))
	}
	for _, kind := range []string{"bidi", "zero-width"} {
		if n := counts[kind]; n > 0 {
			add(High, fmt.Sprintf("%d invisible %s character(s), first U+%04X", n, kind, firstOf[kind]))
		}
	}
}

// flagSequence reports whether the tag character at i belongs to an emoji
// subdivision flag: it follows U+1F3F4 or another tag, and the run of tags
// ends with CANCEL TAG (U+E007F).
func flagSequence(runes []rune, i int) bool {
	j := i
	for j > 0 && runes[j-1] >= 0xE0000 && runes[j-1] <= 0xE007F {
		j--
	}
	if j == 0 || runes[j-1] != 0x1F3F4 {
		return false
	}
	for k := i; k < len(runes); k++ {
		switch {
		case runes[k] == 0xE007F:
			return true
		case runes[k] < 0xE0020 || runes[k] > 0xE007E:
			return false
		}
	}
	return false
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
