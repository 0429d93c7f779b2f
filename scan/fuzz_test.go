package scan

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzText runs every line rule over arbitrary content as SKILL.md and as
// a script: no panic, and every finding names a rule and a line in range.
func FuzzText(f *testing.F) {
	for _, name := range []string{"trigger/hidden-unicode/SKILL.md", "trigger/pipe-to-shell/scripts/install.sh",
		"trigger/obfuscated-exec/scripts/run.py", "trigger/prompt-injection/SKILL.md", "trigger/load-time-command/SKILL.md"} {
		data, err := os.ReadFile(filepath.Join(testdata, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("\xff\xfe\x00\u202e\U000E0041"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := 1
		for _, c := range data {
			if c == '\n' {
				lines++
			}
		}
		for _, rel := range []string{"SKILL.md", "scripts/x.sh"} {
			r := &Result{}
			r.text(rel, data, classify(rel, data, false))
			for _, fd := range r.Findings {
				if fd.Rule == "" || fd.Line < 1 || fd.Line > lines || !utf8.ValidString(fd.Reason) && utf8.Valid(data) {
					t.Fatalf("bad finding %+v", fd)
				}
			}
		}
	})
}
