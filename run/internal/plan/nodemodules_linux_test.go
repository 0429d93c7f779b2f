package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeModulesChecked: Request.NodeModules must be an absolute path
// to a folder inside an interpreter's environment, and the skill must
// not lie where the sandbox shows it.
func TestNodeModulesChecked(t *testing.T) {
	env := t.TempDir()
	nm := filepath.Join(env, "node_modules")
	if err := os.Mkdir(nm, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(env, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	realEnv, _ := filepath.EvalSymlinks(env)
	for _, tt := range []struct {
		name, nodeModules, skill string
		roots                    []string
		want                     string // error; "" accepted
	}{
		{"unset", "", "/s", nil, ""},
		{"inside", nm, "/s", []string{env}, ""},
		{"relative", "node_modules", "/s", []string{env}, "not an absolute path"},
		{"missing", filepath.Join(env, "none"), "/s", []string{env}, "no such file"},
		{"a file", file, "/s", []string{env}, "is not a folder"},
		{"outside", nm, "/s", []string{other}, "lies in no interpreter's environment"},
		{"no interpreter", nm, "/s", nil, "lies in no interpreter's environment"},
		{"skill at the alias", nm, "/node_modules/s", []string{env}, "lies where the sandbox shows NodeModules"},
	} {
		s := &Request{NodeModules: tt.nodeModules}
		got, err := s.nodeModules(tt.skill, tt.roots)
		if tt.want == "" {
			want := ""
			if tt.nodeModules != "" {
				want = filepath.Join(realEnv, "node_modules")
			}
			if err != nil || got != want {
				t.Errorf("%s: %q %v", tt.name, got, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
