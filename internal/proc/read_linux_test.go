package proc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		size, max int
		err       error
	}{
		{0, 10, nil},
		{10, 10, nil},
		{11, 10, ErrTooLarge},
		{4095, 1 << 20, nil},
		{4096, 1 << 20, nil},
		{100000, 1 << 20, nil},
		{100000, 99999, ErrTooLarge},
	} {
		want := bytes.Repeat([]byte("x"), c.size)
		p := filepath.Join(dir, "f")
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p, c.max)
		if !errors.Is(err, c.err) || err == nil && !bytes.Equal(got, want) {
			t.Errorf("size %d, max %d: %d bytes, %v; want %v", c.size, c.max, len(got), err, c.err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// A kernel file, whose size stat does not tell.
	if data, err := ReadFile("/proc/self/status", 1<<20); err != nil || !bytes.Contains(data, []byte("Pid:")) {
		t.Errorf("/proc/self/status: %v, %q", err, data)
	}
}
