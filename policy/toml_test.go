package policy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dump renders a document compactly: "[table] key=value ..." with values in
// Go syntax, so a test states exactly what was parsed.
func dump(d *document) string {
	var parts []string
	for _, t := range d.tables {
		if t.hdrOff >= 0 {
			parts = append(parts, "["+t.name+"]")
		}
		for _, e := range t.entries {
			var v string
			switch e.val.kind {
			case kindString:
				v = fmt.Sprintf("%q", e.val.str)
			case kindInteger:
				v = fmt.Sprint(e.val.num)
			case kindBoolean:
				v = fmt.Sprint(e.val.b)
			case kindStrings:
				v = fmt.Sprintf("%q", e.val.list)
			}
			parts = append(parts, e.key+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// Accepted input, mostly the examples of the TOML 1.0 specification that
// fall inside the subset.
func TestTOMLAccepted(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"comment only", "# This is a full-line comment\n", ""},
		{"bare key", `key = "value"`, `key="value"`},
		{"bare key chars", "bare_key = 1\nbare-key = 2\n1234 = 3", "bare_key=1 bare-key=2 1234=3"},
		{"quoted keys", `"127.0.0.1" = "value"` + "\n" + `"character encoding" = "value"` + "\n" + `'key2' = "value"` + "\n" + `'quoted "value"' = "value"`,
			`127.0.0.1="value" character encoding="value" key2="value" quoted "value"="value"`},
		{"empty quoted key", `"" = "blank"`, `="blank"`},
		{"whitespace around", "  key\t=\t\"v\"   # comment\n", `key="v"`},
		{"comment after value", "key = \"value\" # This is a comment at the end of a line", `key="value"`},
		{"basic escapes", `str = "I'm a string. \"You can quote me\". Name\tJos\u00E9\nLocation\tSF."`,
			`str="I'm a string. \"You can quote me\". Name\tJosé\nLocation\tSF."`},
		{"all escapes", `s = "\b\t\n\f\r\"\\\u00e9\U0001F600"`, `s="\b\t\n\f\r\"\\é😀"`},
		{"literal strings", `winpath = 'C:\Users\nodejs\templates'` + "\n" + `regex = '<\i\c*\s*>'`,
			`winpath="C:\\Users\\nodejs\\templates" regex="<\\i\\c*\\s*>"`},
		{"tab in strings", "a = \"x\ty\"\nb = 'x\ty'", `a="x\ty" b="x\ty"`},
		{"hash in string", `a = "# not a comment"`, `a="# not a comment"`},
		{"integers", "int1 = +99\nint2 = 42\nint3 = 0\nint4 = -17\nz1 = +0\nz2 = -0", "int1=99 int2=42 int3=0 int4=-17 z1=0 z2=0"},
		{"underscores", "int5 = 1_000\nint6 = 5_349_221\nint7 = 53_49_221\nint8 = 1_2_3_4_5", "int5=1000 int6=5349221 int7=5349221 int8=12345"},
		{"int64 range", "max = 9223372036854775807\nmin = -9223372036854775808", "max=9223372036854775807 min=-9223372036854775808"},
		{"booleans", "bool1 = true\nbool2 = false", "bool1=true bool2=false"},
		{"string array", `a = [ "red", "yellow", 'green' ]`, `a=["red" "yellow" "green"]`},
		{"empty array", "a = []", `a=[]`},
		{"multi-line array", "a = [\n  \"x\",  # first\n  # between\n  'y',\n]\n", `a=["x" "y"]`},
		{"trailing comma", `a = ["x",]`, `a=["x"]`},
		{"tables", "[table-1]\nkey1 = \"some string\"\nkey2 = 123\n\n[table-2]\nkey1 = \"another string\"\n",
			`[table-1] key1="some string" key2=123 [table-2] key1="another string"`},
		{"empty table", "[table]", "[table]"},
		{"spaced header", "[ j ] # comment\n", "[j]"},
		{"quoted table name", `[ "x y" ]`, "[x y]"},
		{"root then table", "a = 1\n[t]\na = 2", "a=1 [t] a=2"},
		{"CRLF", "a = 1\r\n[t]\r\nb = ['x',\r\n'y']\r\n", `a=1 [t] b=["x" "y"]`},
		{"BOM", "\ufeffa = 1", "a=1"},
		{"no final newline", "a = 'x'", `a="x"`},
		{"unicode", "a = \"caf\u00e9 \u4e2d\"", "a=\"café 中\""},
		{"int then comment", "a = 1#c", "a=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := parseTOML("p.toml", []byte(tt.in))
			if err != nil {
				t.Fatalf("parseTOML(%q): %v", tt.in, err)
			}
			if got := dump(d); got != tt.want {
				t.Errorf("parseTOML(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
		})
	}
}

// Rejected input: valid TOML outside the subset, and invalid TOML, each
// with the position and the reason.
func TestTOMLRejected(t *testing.T) {
	tests := []struct {
		name, in, want string // want: "line:col: substring of the reason"
	}{
		// Valid TOML the subset does not support.
		{"float", "pi = 3.1415", "1:6: floats are not supported"},
		{"float exp", "a = 5e+22", "1:5: floats are not supported"},
		{"float neg exp", "a = 1e-5", "1:5: floats are not supported"},
		{"inf", "a = inf", "1:5: floats are not supported"},
		{"nan", "a = -nan", "1:5: floats are not supported"},
		{"date", "a = 1979-05-27", "1:5: dates and times are not supported"},
		{"datetime", "a = 1979-05-27T07:32:00Z", "1:5: dates and times are not supported"},
		{"local datetime space", "a = 1979-05-27 07:32:00", "1:5: dates and times are not supported"},
		{"time", "a = 07:32:00", "1:5: dates and times are not supported"},
		{"hex", "a = 0xDEADBEEF", "1:5: hexadecimal, octal and binary"},
		{"octal", "a = 0o755", "1:5: hexadecimal, octal and binary"},
		{"binary", "a = 0b1101", "1:5: hexadecimal, octal and binary"},
		{"inline table", "a = { x = 1 }", "1:5: inline tables are not supported"},
		{"array of tables", "[[products]]", "1:1: arrays of tables"},
		{"dotted key", "physical.color = \"orange\"", "1:9: dotted keys are not supported"},
		{"dotted quoted key", `site."google.com" = true`, "1:5: dotted keys"},
		{"dotted table", "[dog.tater]", "1:5: dotted table names are not supported"},
		{"multi-line basic", `a = """x"""`, "1:5: multi-line strings are not supported"},
		{"multi-line literal", "a = '''x'''", "1:5: multi-line strings are not supported"},
		{"integer array", "a = [1, 2]", "1:6: arrays may hold only strings"},
		{"mixed array", `a = ["x", 1]`, "1:11: arrays may hold only strings"},
		{"nested array", `a = [["x"]]`, "1:6: nested arrays are not supported"},
		{"boolean array", `a = [true]`, "1:6: arrays may hold only strings"},
		// Invalid TOML.
		{"duplicate key", "name = \"Tom\"\nname = \"Pradyun\"", "2:1: key \"name\" is defined twice"},
		{"duplicate quoted key", "spelling = \"favorite\"\n\"spelling\" = \"favourite\"", "2:1: key \"spelling\" is defined twice"},
		{"duplicate table", "[fruit]\napple = 1\n\n[fruit]\norange = 2", "4:1: table [fruit] is defined twice"},
		{"no value", "key = # INVALID", "1:7: missing value"},
		{"no value eof", "key =", "1:6: missing value"},
		{"no equals", "key \"v\"", "1:5: unexpected '\"' after key \"key\"; want '='"},
		{"two on a line", "first = \"Tom\" last = \"Preston-Werner\"", "1:15: unexpected 'l' after the value"},
		{"bare value", "a = hello", "1:5: strings must be quoted"},
		{"empty bare key", "= \"no key name\"", "1:1: unexpected '='; want a key"},
		{"unterminated string", "a = \"abc\nb = 1", "1:5: unterminated string"},
		{"unterminated literal", "a = 'abc", "1:5: unterminated string"},
		{"bad escape", `a = "\x41"`, `1:6: invalid escape sequence \'x'`},
		{"escape e (TOML 1.1)", `a = "\e"`, `1:6: invalid escape sequence`},
		{"short unicode", `a = "\u12"`, "1:6: escape \\u needs 4 hexadecimal digits"},
		{"surrogate", `a = "\uD800"`, "1:6: not a Unicode scalar value"},
		{"too large rune", `a = "\U00110000"`, "1:6: not a Unicode scalar value"},
		{"signed unicode", `a = "\u+123"`, "1:6: needs 4 hexadecimal digits"},
		{"control char", "a = \"x\x01\"", "1:7: control character U+0001"},
		{"DEL in literal", "a = 'x\x7f'", "1:7: control character U+007F"},
		{"control in comment", "# a\x00b\n", "1:4: control character U+0000 in a comment"},
		{"lone CR", "a = 1\rb = 2", "1:6: carriage return without a line feed"},
		{"invalid UTF-8", "a = \"\xff\"", "1:6: invalid UTF-8"},
		{"leading zero", "a = 0123", "1:5: leading zeros"},
		{"double underscore", "a = 1__2", "1:5: underscore"},
		{"leading underscore", "a = _1", "1:5: underscore"},
		{"trailing underscore", "a = 1_", "1:5: underscore"},
		{"overflow", "a = 9223372036854775808", "1:5: out of range"},
		{"double sign", "a = +-1", "1:5: strings must be quoted"},
		{"capital bool", "a = True", "1:5: strings must be quoted"},
		{"unterminated array", "a = [\"x\"", "1:9: unterminated array"},
		{"array missing comma", "a = [\"x\" \"y\"]", "1:10: want ',' or ']'"},
		{"empty table name", "[]", "1:2: want a key"},
		{"unclosed header", "[a", "1:3: want ']'"},
		{"header trailing", "[a] b = 1", "1:5: unexpected 'b' after the table header"},
		{"multi-line key", `"""k""" = 1`, "1:1: a multi-line string cannot be a key"},
		{"column in characters", "a = \"é\" x", "1:9: unexpected 'x'"},
		{"second line column", "a = 1\n  b = 3.0", "2:7: floats"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseTOML("p.toml", []byte(tt.in))
			if err == nil {
				t.Fatalf("parseTOML(%q) succeeded, want error %q", tt.in, tt.want)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			pos, reason, _ := strings.Cut(tt.want, ": ")
			if !strings.HasPrefix(err.Error(), "p.toml:"+pos+": ") || !strings.Contains(err.Error(), reason) {
				t.Errorf("parseTOML(%q) error\n got %q\nwant p.toml:%s", tt.in, err, tt.want)
			}
		})
	}
}

func TestTOMLSizeCap(t *testing.T) {
	big := []byte("a = \"" + strings.Repeat("x", MaxSize) + "\"")
	_, err := parseTOML("p.toml", big)
	if err == nil || !strings.Contains(err.Error(), "larger than 65536 bytes") {
		t.Fatalf("parseTOML of %d bytes: %v, want the size cap", len(big), err)
	}
	// A file far larger than the cap is read only one byte past it, and
	// the error does not claim that as its size.
	huge := filepath.Join(t.TempDir(), "huge.toml")
	if err := os.WriteFile(huge, []byte("# "+strings.Repeat("x", 3*MaxSize)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(huge); err == nil || err.Error() != huge+": file is larger than 65536 bytes, the most a policy may be" {
		t.Fatalf("ParseFile of %d bytes: %v", 3*MaxSize+3, err)
	}
	// Just under the cap is fine.
	ok := []byte("a = \"" + strings.Repeat("x", MaxSize-6) + "\"")
	if _, err := parseTOML("p.toml", ok); err != nil {
		t.Fatalf("parseTOML of %d bytes: %v", len(ok), err)
	}
}
