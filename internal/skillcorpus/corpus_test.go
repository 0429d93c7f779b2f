package skillcorpus

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteShape: the corpus has the promised shape (SKILL.md of 2-8 KB
// of body plus its frontmatter, 1-3 scripts of 1-5 KB, every tenth name
// invalid) and is the same on every call.
func TestWriteShape(t *testing.T) {
	const n = 40
	a, b := t.TempDir(), t.TempDir()
	dirs, err := Write(a, n)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Write(b, n); err != nil {
		t.Fatal(err)
	}
	if len(dirs) != n {
		t.Fatalf("%d folders, want %d", len(dirs), n)
	}
	for i, d := range dirs {
		md, err := os.ReadFile(filepath.Join(d, "SKILL.md"))
		if err != nil {
			t.Fatal(err)
		}
		if len(md) < 2048 || len(md) > 9*1024 {
			t.Errorf("%s: SKILL.md of %d bytes", d, len(md))
		}
		if bad := strings.Contains(string(md), "name: Bad_Name\n"); bad != (i%10 == 9) {
			t.Errorf("%s: invalid name %v, want %v", d, bad, i%10 == 9)
		}
		scripts, err := os.ReadDir(filepath.Join(d, "scripts"))
		if err != nil {
			t.Fatal(err)
		}
		if len(scripts) < 1 || len(scripts) > 3 {
			t.Errorf("%s: %d scripts", d, len(scripts))
		}
		for _, s := range scripts {
			p := filepath.Join(d, "scripts", s.Name())
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) < 1024 || len(data) > 6*1024 {
				t.Errorf("%s: %d bytes", p, len(data))
			}
			other, err := os.ReadFile(filepath.Join(b, filepath.Base(d), "scripts", s.Name()))
			if err != nil || !bytes.Equal(data, other) {
				t.Errorf("%s differs between two corpora (%v)", p, err)
			}
		}
	}
}
