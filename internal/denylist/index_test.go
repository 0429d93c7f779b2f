package denylist

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDenyListIndex: the indexed deny list answers as a scan of every
// entry does (the check run's planGrants made before the index): the first
// entry a path is or lies inside, with the deepest folder matching it,
// and the entries (wildcards expanded) strictly inside a grant.
func TestDenyListIndex(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home", "ann")
	for _, d := range []string{".ssh", ".config/gcloud", "work/.aws", "sock-1", "sock-2"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	list := []string{"~/.ssh", "~/.config/gcloud", "~/.aws", filepath.Join(home, "sock-*"), filepath.Join(base, "home"), "~/.netrc"}
	dl := New(list, []string{home}, map[string]bool{})
	scan := func(p string) (string, string) {
		for _, d := range dl.entries {
			for q := p; ; q = filepath.Dir(q) {
				if ok, _ := filepath.Match(d, q); ok || q == d {
					return d, q
				}
				if q == "/" {
					break
				}
			}
		}
		return "", ""
	}
	under := func(g string) []string {
		var out []string
		for _, d := range dl.entries {
			matches := []string{d}
			if HasMeta(d) {
				matches, _ = filepath.Glob(d)
			}
			for _, m := range matches {
				if m != g && under(m, g) {
					out = append(out, m)
				}
			}
		}
		return out
	}
	for _, p := range []string{
		"/", base, filepath.Join(base, "home"), home, filepath.Join(home, ".ssh"), filepath.Join(home, ".ssh", "id_rsa"),
		filepath.Join(home, ".config"), filepath.Join(home, ".config", "gcloud", "x"), filepath.Join(home, "sock-1"),
		filepath.Join(home, "sock-1", "deep"), filepath.Join(home, "sock"), filepath.Join(home, "work"), "/etc",
	} {
		d, at := dl.EntryOf(p)
		wd, wat := scan(p)
		if d != wd || at != wat {
			t.Errorf("EntryOf(%s) = %q, %q; a scan says %q, %q", p, d, at, wd, wat)
		}
		if got, want := dl.MatchesUnder(p, map[string]bool{}), under(p); !slices.Equal(got, want) {
			t.Errorf("MatchesUnder(%s) = %q; a scan says %q", p, got, want)
		}
	}
}
