package main

import (
	"bytes"
	"strings"
	"testing"
)

// archiveFile is one file of an archive: its name and content.
type archiveFile struct {
	name string
	data []byte
}

// parseArchive splits a test script into the script text and the files
// that follow it, in the txtar layout: a line "-- NAME --" starts the file
// NAME, which holds the lines up to the next such line or the end. The
// script and every file end with a newline (one is added when missing).
// It never fails: any text is an archive, possibly without files.
func parseArchive(data []byte) (script []byte, files []archiveFile) {
	var cur *archiveFile
	var text []byte
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		name, ok := archiveMarker(line)
		if !ok {
			text = append(text, line...)
			continue
		}
		if cur == nil {
			script = endNewline(text)
		} else {
			cur.data = endNewline(text)
			files = append(files, *cur)
		}
		cur, text = &archiveFile{name: name}, nil
	}
	if cur == nil {
		return endNewline(text), nil
	}
	cur.data = endNewline(text)
	return script, append(files, *cur)
}

// archiveMarker returns NAME when line is "-- NAME --" (with or without
// its newline; NAME trimmed and not empty).
func archiveMarker(line []byte) (string, bool) {
	s := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < 7 {
		return "", false
	}
	name := strings.TrimSpace(s[3 : len(s)-3])
	return name, name != ""
}

// endNewline returns b ending with a newline, or empty when b is.
func endNewline(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	return b
}

// formatArchive is the inverse of parseArchive for what it returns.
func formatArchive(script []byte, files []archiveFile) []byte {
	out := append([]byte(nil), script...)
	for _, f := range files {
		out = append(out, "-- "+f.name+" --\n"...)
		out = append(out, f.data...)
	}
	return out
}

func TestParseArchive(t *testing.T) {
	for _, tt := range []struct {
		name, in, script string
		files            []archiveFile
	}{
		{"empty", "", "", nil},
		{"script only", "exec a\nstdout b", "exec a\nstdout b\n", nil},
		{"files", "exec a\n-- x/y.txt --\nhello\n-- z --\nno newline",
			"exec a\n", []archiveFile{{"x/y.txt", []byte("hello\n")}, {"z", []byte("no newline\n")}}},
		{"empty file", "-- a --\n-- b --\nb\n", "", []archiveFile{{"a", nil}, {"b", []byte("b\n")}}},
		{"not markers", "-- --\n--  --\n--x --\n-- a--\n", "-- --\n--  --\n--x --\n-- a--\n", nil},
		{"spaces in marker", "--   a b   --\r\nx\n", "", []archiveFile{{"a b", []byte("x\n")}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			script, files := parseArchive([]byte(tt.in))
			if string(script) != tt.script {
				t.Errorf("script %q, want %q", script, tt.script)
			}
			if len(files) != len(tt.files) {
				t.Fatalf("files %q, want %q", files, tt.files)
			}
			for i, f := range files {
				if f.name != tt.files[i].name || !bytes.Equal(f.data, tt.files[i].data) {
					t.Errorf("file %d = %q %q, want %q %q", i, f.name, f.data, tt.files[i].name, tt.files[i].data)
				}
			}
		})
	}
}

// FuzzParseArchive checks that any input parses, that no file holds a
// marker line, and that formatting what was parsed parses back the same.
func FuzzParseArchive(f *testing.F) {
	f.Add([]byte("exec a\n-- f --\nx\n"))
	f.Add([]byte("-- a --\n-- b --"))
	f.Add([]byte("--  --\n-- \r --\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		script, files := parseArchive(data)
		for _, part := range append([][]byte{script}, dataOf(files)...) {
			if len(part) > 0 && part[len(part)-1] != '\n' {
				t.Fatalf("part %q does not end with a newline", part)
			}
			for _, line := range bytes.SplitAfter(part, []byte("\n")) {
				if _, ok := archiveMarker(line); ok {
					t.Fatalf("part %q holds the marker %q", part, line)
				}
			}
		}
		for _, fl := range files {
			if fl.name == "" || strings.ContainsAny(fl.name, "\n") {
				t.Fatalf("file name %q", fl.name)
			}
		}
		script2, files2 := parseArchive(formatArchive(script, files))
		if !bytes.Equal(script, script2) || len(files) != len(files2) {
			t.Fatalf("round trip: %q %q, then %q %q", script, files, script2, files2)
		}
		for i := range files {
			if files[i].name != files2[i].name || !bytes.Equal(files[i].data, files2[i].data) {
				t.Fatalf("round trip of file %d: %q, then %q", i, files[i], files2[i])
			}
		}
	})
}

// dataOf returns the contents of files.
func dataOf(files []archiveFile) [][]byte {
	var out [][]byte
	for _, f := range files {
		out = append(out, f.data)
	}
	return out
}
