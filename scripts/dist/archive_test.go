package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"
	"time"
)

// testEntries are files given out of order, in nested folders.
func testEntries() []entry {
	return []entry{
		{"pkg/z.txt", 0o644, []byte("z")},
		{"pkg/bin/tool", 0o755, []byte("#!/bin/sh\n")},
		{"pkg/a/b/c.txt", 0o600, []byte("c")},
	}
}

var wantNames = []string{"pkg/", "pkg/a/", "pkg/a/b/", "pkg/a/b/c.txt", "pkg/bin/", "pkg/bin/tool", "pkg/z.txt"}

func TestTarGzDeterministic(t *testing.T) {
	mtime := time.Unix(1796612732, 0).UTC()
	var a, b bytes.Buffer
	if err := writeTarGz(&a, testEntries(), mtime); err != nil {
		t.Fatal(err)
	}
	files := testEntries()
	files[0], files[2] = files[2], files[0]
	if err := writeTarGz(&b, files, mtime); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two writes of the same files differ")
	}
	gz, err := gzip.NewReader(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header name %q time %v", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(mtime) {
			t.Errorf("%s: owner %d:%d %q:%q mtime %v", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		if h.Name == "pkg/bin/tool" && h.Mode != 0o755 || h.Name == "pkg/a/b/c.txt" && h.Mode != 0o600 {
			t.Errorf("%s: mode %o", h.Name, h.Mode)
		}
	}
	if got := fmtNames(names); got != fmtNames(wantNames) {
		t.Errorf("entries %s, want %s", got, fmtNames(wantNames))
	}
}

func TestZipDeterministic(t *testing.T) {
	mtime := time.Unix(1796612732, 0).UTC()
	var a, b bytes.Buffer
	if err := writeZip(&a, testEntries(), mtime); err != nil {
		t.Fatal(err)
	}
	files := testEntries()
	files[0], files[1] = files[1], files[0]
	if err := writeZip(&b, files, mtime); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two writes of the same files differ")
	}
	zr, err := zip.NewReader(bytes.NewReader(a.Bytes()), int64(a.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(mtime) {
			t.Errorf("%s: mtime %v", f.Name, f.Modified)
		}
		if f.Name == "pkg/bin/tool" && f.Mode() != 0o755 {
			t.Errorf("%s: mode %v", f.Name, f.Mode())
		}
		if f.Name == "pkg/z.txt" {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(r)
			if string(data) != "z" {
				t.Errorf("%s: %q", f.Name, data)
			}
		}
	}
	if got := fmtNames(names); got != fmtNames(wantNames) {
		t.Errorf("entries %s, want %s", got, fmtNames(wantNames))
	}
}

// fmtNames joins names for a message.
func fmtNames(names []string) string {
	var b bytes.Buffer
	for _, n := range names {
		b.WriteString(n + " ")
	}
	return b.String()
}

func TestWriteTreeModes(t *testing.T) {
	old := syscallUmask(0o077)
	defer syscallUmask(old)
	root := t.TempDir()
	if err := writeTree(root, []debFile{{"usr/bin/x", 0o755, []byte("x")}, {"etc/y", 0o644, nil}}, 1796612732); err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{"usr": 0o755 | os.ModeDir, "usr/bin": 0o755 | os.ModeDir, "usr/bin/x": 0o755, "etc/y": 0o644} {
		fi, err := os.Stat(root + "/" + path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode || fi.ModTime().Unix() != 1796612732 {
			t.Errorf("%s: mode %v mtime %v", path, fi.Mode(), fi.ModTime())
		}
	}
}
