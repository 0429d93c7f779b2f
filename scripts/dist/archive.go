package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"io"
	"os"
	"path"
	"sort"
	"time"
)

// withDirs returns files sorted by name with an entry for each folder
// they are in, so that every archive lists the same entries in the same
// order.
func withDirs(files []entry) []entry {
	seen := map[string]bool{}
	out := append([]entry(nil), files...)
	for _, f := range files {
		for dir := path.Dir(f.name); dir != "." && dir != "/" && !seen[dir]; dir = path.Dir(dir) {
			seen[dir] = true
			out = append(out, entry{name: dir + "/", mode: os.ModeDir | 0o755})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// writeTarGz writes files as a gzip-compressed tar: owner 0:0 without
// names, mtime for every entry, no name or time in the gzip header.
func writeTarGz(w io.Writer, files []entry, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, f := range withDirs(files) {
		hdr := &tar.Header{
			Name:    f.name,
			Mode:    int64(f.mode.Perm()),
			ModTime: mtime,
			Format:  tar.FormatUSTAR,
		}
		if f.mode.IsDir() {
			hdr.Typeflag = tar.TypeDir
		} else {
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(f.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// writeZip writes files as a zip archive with mtime for every entry.
func writeZip(w io.Writer, files []entry, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range withDirs(files) {
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime}
		if f.mode.IsDir() {
			hdr.Method = zip.Store
		}
		hdr.SetMode(f.mode)
		fw, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.data); err != nil {
			return err
		}
	}
	return zw.Close()
}
