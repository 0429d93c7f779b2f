package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// reference is what encoding/json writes for v, with or without HTML
// escaping.
func reference(t *testing.T, v any, escapeHTML bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

var seedStrings = []string{
	"", "plain", `quote " and \ backslash`, "\b\f\n\r\t", "\x00\x01\x1f\x7f", "<a href='x'>&amp;</a>",
	"\u2028\u2029", "\xff\xfe", "a\xc3", "\u0080\u009b\u009f", "é日本😀", "\xed\xa0\x80", "/slash",
}

// FuzzAppendString compares AppendString with encoding/json, with and
// without HTML escaping, on any string.
func FuzzAppendString(f *testing.F) {
	for _, s := range seedStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{false, true} {
			if got, want := AppendString(nil, s, html), reference(t, s, html); !bytes.Equal(got, want) {
				t.Errorf("AppendString(%q, %v) = %s, encoding/json writes %s", s, html, got, want)
			}
		}
	})
}

func TestAppendFloat(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e-10, 1e20, 1e21, 1.234e22, 123.456,
		5e-324, math.MaxFloat64, -2.5e-8, 0.000123, 12345678901234567890, 1.0000000000000002} {
		got, err := AppendFloat(nil, f)
		if want := reference(t, f, false); err != nil || !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v) = %s, %v; encoding/json writes %s", f, got, err, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := AppendFloat(nil, f); err == nil {
			t.Errorf("AppendFloat(%v) accepted", f)
		}
	}
}

func TestAppendStrings(t *testing.T) {
	for _, ss := range [][]string{nil, {}, {"a"}, {"<b>", "\n", ""}} {
		for _, html := range []bool{false, true} {
			if got, want := AppendStrings(nil, ss, html), reference(t, ss, html); !bytes.Equal(got, want) {
				t.Errorf("AppendStrings(%q, %v) = %s, encoding/json writes %s", ss, html, got, want)
			}
		}
	}
}
