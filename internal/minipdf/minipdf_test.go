package minipdf

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestOnePageXref checks the cross-reference table: every offset points
// at its object's header, and startxref at the table.
func TestOnePageXref(t *testing.T) {
	pdf, err := OnePage([]string{"a", "b (c) \\ d"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf, []byte("%PDF-1.4\n")) || !bytes.HasSuffix(pdf, []byte("%%EOF\n")) {
		t.Fatalf("not framed as a PDF: %q ... %q", pdf[:10], pdf[len(pdf)-10:])
	}
	m := regexp.MustCompile(`startxref\n(\d+)\n`).FindSubmatch(pdf)
	if m == nil {
		t.Fatal("no startxref")
	}
	xref, _ := strconv.Atoi(string(m[1]))
	if !bytes.HasPrefix(pdf[xref:], []byte("xref\n0 6\n")) {
		t.Fatalf("startxref %d points at %q", xref, pdf[xref:min(len(pdf), xref+10)])
	}
	entries := regexp.MustCompile(`(\d{10}) 00000 n `).FindAllSubmatch(pdf[xref:], -1)
	if len(entries) != 5 {
		t.Fatalf("%d objects in the table, want 5", len(entries))
	}
	for i, e := range entries {
		off, _ := strconv.Atoi(string(e[1]))
		if want := fmt.Sprintf("%d 0 obj\n", i+1); !bytes.HasPrefix(pdf[off:], []byte(want)) {
			t.Errorf("object %d: offset %d points at %q", i+1, off, pdf[off:min(len(pdf), off+10)])
		}
	}
}

// TestOnePageReadByPoppler has pdftotext read the text back, parentheses
// and backslashes included, where poppler is installed.
func TestOnePageReadByPoppler(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skipf("pdftotext is not installed: %v", err)
	}
	lines := []string{"Quarterly report", "Revenue up 12% (EMEA) \\ net"}
	pdf, err := OnePage(lines)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(in, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdftotext", in, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v: %s", err, out)
	}
	for _, l := range lines {
		if !strings.Contains(string(out), l) {
			t.Errorf("%q not in the text read back:\n%s", l, out)
		}
	}
}
