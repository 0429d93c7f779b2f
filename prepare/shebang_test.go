package prepare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRewriteHeader(t *testing.T) {
	const old, new = "/c/.build-1/env/bin/", "/c/envs/KEY/bin/"
	long := "/" + strings.Repeat("x", 250) + "/bin/"
	tests := []struct {
		in, want, newPrefix string // want "" when left alone
	}{
		{"#!/c/.build-1/env/bin/python3\nimport x\n", "#!/c/envs/KEY/bin/python3\nimport x\n", new},
		{"#!/c/.build-1/env/bin/python3 -E", "#!/c/envs/KEY/bin/python3 -E\n", new},
		{"#!/bin/sh\n'''exec' /c/.build-1/env/bin/python3 \"$0\" \"$@\"\n' '''\nimport x\n",
			"#!/bin/sh\n'''exec' /c/envs/KEY/bin/python3 \"$0\" \"$@\"\n' '''\nimport x\n", new},
		{"#!/usr/bin/python3\n# /c/.build-1/env/bin/\n", "", new},
		{"#!/bin/sh\necho /c/.build-1/env/bin/x\n", "", new},
		{"\x7fELF/c/.build-1/env/bin/", "", new},
		{"#!/c/.build-1/env/bin/python3\n", "", long},
	}
	for _, tt := range tests {
		out, ok := rewriteHeader([]byte(tt.in), []byte(old), []byte(tt.newPrefix))
		if ok != (tt.want != "") || ok && string(out) != tt.want {
			t.Errorf("%.50q: got %q %v, want %q", tt.in, out, ok, tt.want)
		}
	}
}

// TestRewriteShebangsLinks: a link in bin/ is not followed and a hard
// link's other name is not written through.
func TestRewriteShebangsLinks(t *testing.T) {
	built := filepath.Join(t.TempDir(), "env")
	outside := filepath.Join(t.TempDir(), "victim")
	script := "#!" + built + "/bin/python3\nprint(1)\n"
	os.MkdirAll(filepath.Join(built, "bin"), 0o755)
	for _, f := range []string{outside, filepath.Join(built, "bin", "tool")} {
		if err := os.WriteFile(f, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(built, "bin", "linked")); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(built, "bin", "hard")
	if err := os.Link(outside, hard); err != nil {
		t.Skipf("no hard link: %v", err)
	}
	if n, _ := rewriteShebangs(built, "/final dir/KEY"); n != 0 {
		t.Errorf("a final path with a space: rewrote %d", n)
	}
	n, err := rewriteShebangs(built, "/final/KEY")
	if err != nil || n != 2 {
		t.Fatalf("rewrote %d: %v", n, err)
	}
	if got, _ := os.ReadFile(outside); string(got) != script {
		t.Errorf("file outside changed: %q", got)
	}
	for _, f := range []string{"tool", "hard"} {
		got, _ := os.ReadFile(filepath.Join(built, "bin", f))
		fi, _ := os.Stat(filepath.Join(built, "bin", f))
		if string(got) != "#!/final/KEY/bin/python3\nprint(1)\n" || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: %q %v", f, got, fi.Mode())
		}
	}
}
