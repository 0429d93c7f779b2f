package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// TestDenyWriteThroughLink: a deny_write path inside a write grant stays
// read-only when one of the two is named through a symbolic link to the
// other's folder (red team: it was dropped as lying outside every write
// grant, and runs wrote it).
func TestDenyWriteThroughLink(t *testing.T) {
	base := t.TempDir()
	ws, link := filepath.Join(base, "ws"), filepath.Join(base, "ws-link")
	if err := os.MkdirAll(filepath.Join(ws, "frozen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, write, deny string }{
		{"deny through the link", ws, filepath.Join(link, "frozen")},
		{"grant through the link", link, filepath.Join(ws, "frozen")},
	} {
		t.Run(c.name, func(t *testing.T) {
			op := &Policy{Filesystem: Filesystem{Write: []string{c.write}, DenyWrite: []string{c.deny}}}
			r, err := Resolve(Flags{}, op, nil, "/skill")
			if err != nil {
				t.Fatal(err)
			}
			sb := &run.Sandbox{}
			r.Apply(sb, func(string) (string, bool) { return "", false })
			if !slices.Contains(sb.ReadOnlyPaths, c.deny) {
				t.Errorf("ReadOnlyPaths %q, want %s in it (write grant %s)", sb.ReadOnlyPaths, c.deny, c.write)
			}
		})
	}
}
