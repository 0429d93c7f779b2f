package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLineEndNotices checks that skill-sandbox's own lines (notices) never
// split a line of the script's: one written while the script's line is
// open waits for that line to end, or for the script's output to be
// complete, and the script's bytes come through unchanged and in order.
func TestLineEndNotices(t *testing.T) {
	const n1, n2 = "skill-sandbox: network: denied a\n", "skill-sandbox: network: denied b\n"
	big := strings.Repeat("z", maxHeld) + "\n"
	for _, c := range []struct {
		name string
		ops  []string // "s:" script bytes, "n:" a notice, "d" scriptDone, "e" endLine, "m:" a message after the run
		want string
	}{
		{"at a line start", []string{"s:one\n", "n:" + n1, "s:two\n"}, "one\n" + n1 + "two\n"},
		{"inside a line", []string{"s:par", "n:" + n1, "s:tial\nnext"}, "partial\n" + n1 + "next"},
		{"two held", []string{"s:a", "n:" + n1, "n:" + n2, "s:b\n"}, "ab\n" + n1 + n2},
		{"held to the end", []string{"s:no newline", "n:" + n1, "d"}, "no newline\n" + n1},
		{"open line, nothing after", []string{"s:no newline", "d"}, "no newline"},
		{"message after the run", []string{"s:no newline", "d", "m:skill-sandbox: error: x\n"}, "no newline\nskill-sandbox: error: x\n"},
		{"notice after the run", []string{"s:x", "d", "n:" + n1}, "x\n" + n1},
		{"record after an open line", []string{"s:x", "d", "e", "m:{}\n"}, "x\n{}\n"},
		{"record after a held notice", []string{"s:x", "n:" + n1, "d", "e", "m:{}\n"}, "x\n" + n1 + "{}\n"},
		{"more held than maxHeld", []string{"s:x", "n:" + big, "s:y\n"}, "x\n" + big + "y\n"},
	} {
		var out strings.Builder
		le := &lineEnd{w: &out}
		for _, op := range c.ops {
			switch kind, text, _ := strings.Cut(op, ":"); kind {
			case "s", "m":
				le.Write([]byte(text))
			case "n":
				notices{le}.Write([]byte(text))
			case "d":
				le.scriptDone()
			case "e":
				le.endLine()
			}
		}
		if out.String() != c.want {
			t.Errorf("%s: got %q, want %q", c.name, out.String(), c.want)
		}
	}
}

// TestLineEndNoticeNotHiddenForever checks that a script keeping a line
// open (a progress bar) does not hold a notice back for the whole run:
// after the wait the line is ended for it and the notice written.
func TestLineEndNoticeNotHiddenForever(t *testing.T) {
	const n1 = "skill-sandbox: network: denied a\n"
	// A file, which the timer's goroutine may write while the test reads.
	out, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	read := func() string {
		b, _ := os.ReadFile(out.Name())
		return string(b)
	}
	le := &lineEnd{w: out, wait: 10 * time.Millisecond}
	le.Write([]byte("progress 10%\r"))
	notices{le}.Write([]byte(n1))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(read(), n1) {
		if time.Now().After(deadline) {
			t.Fatalf("the notice is still held: %q", read())
		}
		time.Sleep(5 * time.Millisecond)
	}
	le.Write([]byte("progress 20%\n"))
	le.scriptDone()
	if got, want := read(), "progress 10%\r\n"+n1+"progress 20%\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
