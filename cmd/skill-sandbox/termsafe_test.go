package main

import (
	"bytes"
	"testing"
)

func TestTermSafe(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"plain text and UTF-8", []string{"héllo, 世界 🚀\n\tok"}, "héllo, 世界 🚀\n\tok"},
		{"ESC sequences", []string{"\x1b]0;title\x07\x1b[31mred\x1b[0m"}, `\x1b]0;title\x07\x1b[31mred\x1b[0m`},
		{"carriage return, backspace, DEL, NUL", []string{"a\rb\bc\x7fd\x00"}, `a\x0db\x08c\x7fd\x00`},
		{"C1 CSI as UTF-8", []string{"\u009b2J\u0085"}, `\u009b2J\u0085`},
		{"raw C1 byte and invalid UTF-8", []string{"\x9b2J\xff\xc3("}, `\x9b2J\xff\xc3(`},
		{"UTF-8 split across writes", []string{"caf\xc3", "\xa9 \xe4\xb8", "\x96\xe7\x95\x8c"}, "café 世界"},
		{"C1 split across writes", []string{"x\xc2", "\x9b"}, `x\u009b`},
		{"incomplete at the end", []string{"ok\xe4\xb8"}, `ok\xe4\xb8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			ts := &termSafe{w: &b}
			for _, w := range tt.writes {
				if n, err := ts.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if err := ts.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got %q, want %q", b.String(), tt.want)
			}
		})
	}
}
