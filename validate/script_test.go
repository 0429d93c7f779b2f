package validate

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestDetectInterpreter(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string
		mode    os.FileMode
		want    Interpreter
		wantErr error
	}{
		{"a.py", "print(1)\n", 0o644, Interpreter{Program: "python3", Source: "extension"}, nil},
		{"a.sh", "echo\n", 0o644, Interpreter{Program: "bash", Source: "extension"}, nil},
		{"a.JS", "1\n", 0o644, Interpreter{Program: "node", Source: "extension"}, nil},
		{"a.mjs", "1\n", 0o644, Interpreter{Program: "node", Source: "extension"}, nil},
		{"env", "#!/usr/bin/env python3\n", 0o644, Interpreter{Program: "python3", Source: "shebang"}, nil},
		{"env-s", "#!/usr/bin/env -S python3 -u\n", 0o644, Interpreter{Program: "python3", Args: []string{"-u"}, Source: "shebang"}, nil},
		{"env-assign", "#!/usr/bin/env -S LC_ALL=C python3\n", 0o644, Interpreter{Program: "python3", Source: "shebang"}, nil},
		{"abs", "#!/bin/sh -e\n", 0o644, Interpreter{Program: "/bin/sh", Args: []string{"-e"}, Source: "shebang"}, nil},
		{"crlf", "#!/usr/bin/env bash\r\necho\r\n", 0o644, Interpreter{Program: "bash", Source: "shebang"}, nil},
		{"space", "#! /usr/bin/python3\n", 0o644, Interpreter{Program: "/usr/bin/python3", Source: "shebang"}, nil},
		{"shebang-wins.sh", "#!/usr/bin/env python3\n", 0o644, Interpreter{Program: "python3", Source: "shebang"}, nil},
		{"binary", "\x7fELF", 0o755, Interpreter{Source: "executable"}, nil},
		{"notes.txt", "hello\n", 0o644, Interpreter{}, ErrNoInterpreter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, tt.name)
			if err := os.WriteFile(p, []byte(tt.content), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, tt.mode); err != nil {
				t.Fatal(err)
			}
			got, err := DetectInterpreter(p)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"#!\n", "#!/usr/bin/env\n", "#!/usr/bin/env -S\n"} {
		p := filepath.Join(dir, "bad")
		if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := DetectInterpreter(p); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestInterpreterString(t *testing.T) {
	tests := []struct {
		in   Interpreter
		want string
	}{
		{Interpreter{Program: "python3", Args: []string{"-u"}}, "python3 -u"},
		{Interpreter{Program: "bash"}, "bash"},
		{Interpreter{}, "(direct)"},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestResolveScript(t *testing.T) {
	root := t.TempDir()
	skill := filepath.Join(root, "s")
	for _, d := range []string{"scripts/sub", "references"} {
		if err := os.MkdirAll(filepath.Join(skill, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"scripts/run.py", "scripts/sub/x.sh", "references/doc.md"} {
		if err := os.WriteFile(filepath.Join(skill, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "outside.py"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"scripts/alias.py": "run.py",
		"scripts/out.py":   filepath.Join(root, "outside.py"),
		"scripts/doc.md":   "../references/doc.md",
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(skill, l)); err != nil {
			t.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(skill)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		script string
		want   string // relative to the real skill folder; "" means refused
	}{
		{"run.py", "scripts/run.py"},
		{"scripts/run.py", "scripts/run.py"},
		{"sub/x.sh", "scripts/sub/x.sh"},
		{"alias.py", "scripts/run.py"},
		{"", ""},
		{"/etc/passwd", ""},
		{"../SKILL.md", ""},
		{"sub/../../references/doc.md", ""},
		{"out.py", ""},
		{"doc.md", ""},
		{"missing.py", ""},
		{"sub", ""},
		{"a\x00b", ""},
	}
	for _, tt := range tests {
		got, err := ResolveScript(skill, tt.script)
		if tt.want == "" {
			if !errors.Is(err, ErrScriptRefused) {
				t.Errorf("ResolveScript(%q) = %q, %v; want ErrScriptRefused", tt.script, got, err)
			}
			continue
		}
		if err != nil || got != filepath.Join(real, filepath.FromSlash(tt.want)) {
			t.Errorf("ResolveScript(%q) = %q, %v; want %s", tt.script, got, err, tt.want)
		}
	}
	noScripts := filepath.Join(root, "empty")
	if err := os.Mkdir(noScripts, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveScript(noScripts, "run.py"); !errors.Is(err, ErrScriptRefused) {
		t.Errorf("no scripts/: err = %v, want ErrScriptRefused", err)
	}
}
