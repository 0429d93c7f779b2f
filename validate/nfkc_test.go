package validate

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNFKC(t *testing.T) {
	tests := []struct{ in, want string }{
		{"pdf-processing", "pdf-processing"},
		{"ｐｄｆ－ｔｏｏｌｓ", "pdf-tools"},     // fullwidth ASCII
		{"ﬁle-ﬂow", "file-flow"},       // ligatures
		{"cafe\u0301", "café"},         // combining acute composes
		{"e\u0323\u0302", "ệ"},         // canonical reordering then composition
		{"e\u0302\u0323", "ệ"},         // already ordered differently, same result
		{"x²₃", "x23"},                 // superscript, subscript
		{"Ⅻ", "XII"},                   // roman numeral
		{"①-ⓐ", "1-a"},                 // circled digit and letter
		{"\u212b", "\u00c5"},           // Angstrom sign -> A with ring
		{"\u1100\u1161\u11a8", "각"},    // Hangul jamo compose to a syllable
		{"각", "각"},                     // and a syllable stays composed
		{"㎞", "km"},                    // squared compatibility character
		{"\u00a0a\u3000", " a "},       // no-break and ideographic spaces
		{"\u0344", "\u0308\u0301"},     // composition exclusion stays decomposed
		{"\U0001d41a\U0001d7ce", "a0"}, // mathematical bold a, digit zero
	}
	for _, tt := range tests {
		if got := NFKC(tt.in); got != tt.want {
			t.Errorf("NFKC(%+q) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}

// TestNFKCMatchesPython compares NFKC with Python's unicodedata (what the
// reference validator uses) for every code point of planes 0-2 and 14 and for combining
// sequences. It needs python3 with the same Unicode version as the tables.
func TestNFKCMatchesPython(t *testing.T) {
	if testing.Short() {
		t.Skip("slow cross-check")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	out, err := exec.Command(py, "-c", "import unicodedata; print(unicodedata.unidata_version)").Output()
	if err != nil || strings.TrimSpace(string(out)) != unicodeVersion {
		t.Skipf("python3's Unicode version %q differs from the tables' %s (%v)", strings.TrimSpace(string(out)), unicodeVersion, err)
	}
	var inputs []string
	// Planes 0-2 and the tag/variation-selector block hold every character
	// with a decomposition or a combining class.
	for r := rune(0); r <= 0xE01EF; r++ {
		if r == 0x30000 {
			r = 0xE0000
		}
		if utf8.ValidRune(r) && r != '\n' && r != '\r' {
			inputs = append(inputs, string(r))
		}
	}
	marks := []string{"\u0301", "\u0323", "\u0302", "\u0308", "\u05b0", "\u0f71", "\u0f72", "\u3099", "\u11a8", "\u1161"}
	for _, base := range []string{"a", "e", "o", "u", "\u1100", "\u304b", "\u05d0", "\u0f40", "\uac00"} {
		for _, m1 := range marks {
			for _, m2 := range marks {
				inputs = append(inputs, base+m1+m2)
			}
		}
	}
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, s := range inputs {
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
	}
	script := `import sys, json, unicodedata
for line in sys.stdin.buffer.read().split(b"\n"):
    if line:
        sys.stdout.write(json.dumps(unicodedata.normalize("NFKC", json.loads(line))) + "\n")`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = &in
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	bad := 0
	for _, s := range inputs {
		var want string
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("reading python's output: %v", err)
		}
		if got := NFKC(s); got != want {
			bad++
			if bad <= 10 {
				t.Errorf("NFKC(%+q) = %+q, python says %+q", s, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d inputs differ", bad, len(inputs))
	}
}
