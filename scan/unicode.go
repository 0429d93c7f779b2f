package scan

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// hiddenKind classifies a rune that changes how text reads without being
// seen: "bidi", "zero-width", "tag", "variation" (variation selectors,
// which can carry a byte each after any character) or "filler" (Hangul
// fillers, blank but not whitespace); "" for anything else.
func hiddenKind(r rune) string {
	switch {
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return "variation"
	case r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0:
		return "filler"
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
// the kind a zero-width joiner legitimately sits between; a variation
// selector counts as part of the glyph it follows (❤️‍🔥 is U+2764 U+FE0F
// ZWJ U+1F525).
func visibleNonASCII(r rune) bool {
	k := hiddenKind(r)
	return r > 0x7F && r != utf8.RuneError && (k == "" || k == "variation")
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
	var hiddenText, varText strings.Builder
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		kind := hiddenKind(r)
		if kind == "" {
			continue
		}
		switch {
		case (r == 0x200C || r == 0x200D) && i > 0 && i+1 < len(runes) && visibleNonASCII(runes[i-1]) && visibleNonASCII(runes[i+1]):
			continue // emoji ZWJ sequences, Indic and Arabic scripts
		case kind == "variation":
			// One selector picks a glyph (emoji ❤️, keycaps, CJK
			// ideograph variants); a run of them has no visible use and
			// encodes bytes (FE00+b for b < 16, E0100+b-16 above).
			j := i
			for j < len(runes) && hiddenKind(runes[j]) == "variation" {
				j++
			}
			if j-i >= 2 {
				counts[kind] += j - i
				if _, ok := firstOf[kind]; !ok {
					firstOf[kind] = r
				}
				for _, v := range runes[i:j] {
					b := v - 0xFE00
					if v >= 0xE0100 {
						b = v - 0xE0100 + 16
					}
					if b >= 0x20 && b < 0x7F {
						varText.WriteRune(b)
					}
				}
			}
			i = j - 1
			continue
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
	if n := counts["variation"]; n > 0 {
		add(Critical, fmt.Sprintf("%d variation selectors in a row (invisible, one byte each), spelling %q", n, truncate(varText.String(), 80)))
	}
	for _, kind := range []string{"bidi", "zero-width", "filler"} {
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
