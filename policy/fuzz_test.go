package policy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addSeeds adds the policy files under testdata and a few edge cases.
func addSeeds(f *testing.F) {
	paths, err := filepath.Glob("../testdata/policy/*.toml")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"", "[resources]\ntimeout = \"30s\"\nmemory_mb = 1_024\n",
		"a = [\n'x', # c\r\n\"\\u00e9\\U0001F600\",\n]",
		"[network]\nallowed_domains = [\"*.example.com:443\"]",
		"[env]\nset = [\"A=b\"]\npass = [\"LD_PRELOAD\"]",
		"\ufeff[\"q\"]\n'k' = -0", "a = 1979-05-27T07:32:00Z", "a = {x=1}", "[[t]]",
		"a = \"\\uD800\"", "a = 0x1F", "a.b = 1", "a = 9223372036854775808",
		"[backend]\ndefault = \"gvisor\"\nsigned = \"native\"\nallow_fallback = true\n[signature]\nallowed_signers = \"k\"\n",
		"[backend]\ndefault = \"docker\"", "[backend]\nsigned = \"native\"",
	} {
		f.Add([]byte(s))
	}
}

// FuzzParseTOML checks that the TOML subset parser never panics, that every
// error is an *Error placed inside the input, and that a parse is
// deterministic.
func FuzzParseTOML(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseTOML("f.toml", data)
		if err != nil {
			checkError(t, data, err)
			return
		}
		again, err := parseTOML("f.toml", data)
		if err != nil || dump(again) != dump(d) {
			t.Fatalf("second parse differs: %v", err)
		}
		// Every string parsed, written back as a basic string with
		// escapes, parses to itself.
		for _, tb := range d.tables {
			for _, e := range tb.entries {
				strs := e.val.list
				if e.val.kind == kindString {
					strs = []string{e.val.str}
				}
				for _, s := range strs {
					back, err := parseTOML("q.toml", []byte("k = "+quoteTOML(s)+"\n"))
					if err != nil || back.tables[0].entries[0].val.str != s {
						t.Fatalf("string %q does not survive quoting: %v", s, err)
					}
				}
			}
		}
	})
}

// quoteTOML writes s as a TOML basic string.
func quoteTOML(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case isControl(r):
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzParse runs the whole policy parser, schema included, on the same
// inputs: it must never panic and must report errors as *Error.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := Parse("f.toml", data, "/policy", "/home/u"); err != nil {
			checkError(t, data, err)
		}
	})
}

func checkError(t *testing.T, data []byte, err error) {
	t.Helper()
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is %T, want *Error", err, err)
	}
	lines := bytes.Count(data, []byte("\n")) + 1
	if pe.Line < 0 || pe.Line > lines || pe.Line == 0 && len(data) <= MaxSize && pe.Col != 0 {
		t.Fatalf("error %v: line %d outside the %d lines of the input", err, pe.Line, lines)
	}
	if pe.Line > 0 && pe.Col < 1 {
		t.Fatalf("error %v: column %d", err, pe.Col)
	}
}
