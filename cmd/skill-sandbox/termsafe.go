package main

import (
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

// termSafe passes a script's output on to a terminal with every control
// character made visible: C0 controls other than newline and tab (ESC
// above all, which starts the sequences that move the cursor, rewrite the
// window title, set the clipboard (OSC 52) or, on some terminals, answer
// back into the input), DEL, the C1 controls U+0080–U+009F (CSI, OSC, ...
// in their one-character form) and bytes that are not UTF-8 are written
// as \xNN or \uNNNN. Printable text, UTF-8 included, is unchanged. A
// UTF-8 sequence split across two writes is held back until it is whole.
type termSafe struct {
	w       io.Writer
	pending []byte // the start of a UTF-8 sequence cut by the last write
}

// Write implements io.Writer. It reports len(p) when the escaped bytes
// were written.
func (t *termSafe) Write(p []byte) (int, error) {
	data := p
	if len(t.pending) > 0 {
		data = append(t.pending, p...)
		t.pending = nil
	}
	out := make([]byte, 0, len(data)+16)
	for i := 0; i < len(data); {
		b := data[i]
		switch {
		case b == '\n' || b == '\t' || b >= 0x20 && b < 0x7f:
			out = append(out, b)
			i++
			continue
		case b < utf8.RuneSelf:
			out = fmt.Appendf(out, `\x%02x`, b)
			i++
			continue
		case !utf8.FullRune(data[i:]):
			t.pending = append([]byte(nil), data[i:]...)
			i = len(data)
			continue
		}
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = fmt.Appendf(out, `\x%02x`, b)
		case r >= 0x80 && r <= 0x9f:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	if len(out) > 0 {
		if _, err := t.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes a UTF-8 sequence left incomplete at the end of the output,
// escaped.
func (t *termSafe) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	var out []byte
	for _, b := range t.pending {
		out = fmt.Appendf(out, `\x%02x`, b)
	}
	t.pending = nil
	_, err := t.w.Write(out)
	return err
}

// isTerminal reports whether st (fileInfo of an output) is a character
// device, such as a terminal. Other character devices (/dev/null) lose
// nothing by the escaping, so no terminal-specific call is needed.
func isTerminal(st os.FileInfo) bool {
	return st != nil && st.Mode()&os.ModeCharDevice != 0
}
