package main

import (
	"archive/zip"
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPyVersion(t *testing.T) {
	const commit = "757357a0c0ffee0000000000000000000000beef"
	tests := []struct {
		describe, want string
		bad            bool
	}{
		{"v1.2.0", "1.2.0", false},
		{"v1.2.0-3-g757357a", "1.2.0+3.g757357a", false},
		{"v1.2.0-3-g757357a-dirty", "1.2.0+3.g757357a.dirty", false},
		{"v1.2.0-dirty", "1.2.0+dirty", false},
		{"757357a", "0+git20261207.757357a", false},
		{"v1.2.0~rc1", "1.2.0rc1", false},
		{"v1.2.0~beta", "", true},
		{"release", "", true},
	}
	for _, tt := range tests {
		got, err := pyVersion(tt.describe, commit, 1796601600) // 2026-12-07
		if tt.bad != (err != nil) || got != tt.want {
			t.Errorf("pyVersion(%q) = %q, %v; want %q (error %v)", tt.describe, got, err, tt.want, tt.bad)
		}
	}
}

// TestWheelRecord checks that the wheel's RECORD lists every file with
// its hash and size, and that the binary keeps its mode.
func TestWheelRecord(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "skill-sandbox")
	if err := os.WriteFile(bin, []byte("not really a binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := config{out: t.TempDir(), version: "v1.2.0", epoch: 1796601600, root: root, targets: []target{{"linux", "arm64"}}}
	names, err := cfg.writePythonOnly(bin)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 2 || names[0] != "skill_sandbox-1.2.0.tar.gz" || names[1] != wheelName("1.2.0", "arm64") {
		t.Fatalf("wrote %q", names)
	}
	zr, err := zip.OpenReader(filepath.Join(cfg.out, names[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string][]byte{}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = b
		if f.Name == "skill_sandbox/bin/skill-sandbox" && f.Mode().Perm() != 0o755 {
			t.Errorf("binary mode %v", f.Mode())
		}
	}
	record := files["skill_sandbox-1.2.0.dist-info/RECORD"]
	listed := 0
	sc := bufio.NewScanner(strings.NewReader(string(record)))
	for sc.Scan() {
		parts := strings.Split(sc.Text(), ",")
		if len(parts) != 3 {
			t.Fatalf("RECORD line %q", sc.Text())
		}
		listed++
		if parts[1] == "" {
			continue // RECORD itself
		}
		if got := recordHash(files[parts[0]]); got != parts[1] {
			t.Errorf("%s: RECORD says %s, file is %s", parts[0], parts[1], got)
		}
	}
	if listed != len(files) {
		t.Errorf("RECORD lists %d files, the wheel holds %d", listed, len(files))
	}
	if !strings.Contains(string(files["skill_sandbox/_version.py"]), `"1.2.0"`) {
		t.Errorf("_version.py: %s", files["skill_sandbox/_version.py"])
	}
	if !strings.Contains(string(files["skill_sandbox-1.2.0.dist-info/WHEEL"]), "Tag: py3-none-manylinux_2_17_aarch64\n") {
		t.Errorf("WHEEL: %s", files["skill_sandbox-1.2.0.dist-info/WHEEL"])
	}
}
