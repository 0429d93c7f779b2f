package grants

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/artifacts"
)

// TestGitDirIn: git's own test of a git folder, on folders made here.
func TestGitDirIn(t *testing.T) {
	for _, c := range []struct {
		entries []string
		want    bool
	}{
		{[]string{"HEAD", "objects/", "refs/"}, true},
		{[]string{"HEAD", "commondir"}, true},
		{[]string{"HEAD", "objects/"}, false},
		{[]string{"objects/", "refs/", "commondir"}, false},
		{[]string{"HEAD"}, false},
		{nil, false},
	} {
		d := t.TempDir()
		for _, e := range c.entries {
			p := filepath.Join(d, e)
			var err error
			if strings.HasSuffix(e, "/") {
				err = os.Mkdir(p, 0o755)
			} else {
				err = os.WriteFile(p, nil, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := artifacts.GitDirPath(d); got != c.want {
			t.Errorf("%v: artifacts.GitDirPath = %v, want %v", c.entries, got, c.want)
		}
		if got := inAutorun(filepath.Join(d, "sub")); got != c.want {
			t.Errorf("%v: inAutorun(sub) = %v, want %v", c.entries, got, c.want)
		}
	}
}
