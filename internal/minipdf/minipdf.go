// Package minipdf writes the smallest valid PDF files that poppler, pypdf
// and other readers take, for tests and probes that need a document made
// on the spot rather than a committed one.
package minipdf

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// OnePage returns a one-page PDF 1.4 showing lines in Helvetica, its
// content stream Flate-compressed, with a correct cross-reference table.
func OnePage(lines []string) ([]byte, error) {
	var content bytes.Buffer
	content.WriteString("BT /F1 18 Tf 72 720 Td 24 TL\n")
	esc := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`)
	for _, l := range lines {
		fmt.Fprintf(&content, "(%s) Tj T*\n", esc.Replace(l))
	}
	content.WriteString("ET\n")
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	if _, err := zw.Write(content.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.String()),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	return Objects(objs), nil
}

// Objects returns a PDF 1.4 of objs, numbered from 1 in order, the first
// the catalog, with a correct cross-reference table.
func Objects(objs []string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}
