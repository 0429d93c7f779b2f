package prepare

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/treestamp"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

// fakeEnv makes an environment of a few files with its manifest in a new
// cache, old enough for its stamp to be recorded.
func fakeEnv(t *testing.T) (Cache, string) {
	t.Helper()
	c := Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	dir := c.Path(benchKey)
	if err := os.MkdirAll(filepath.Join(dir, "lib", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lib", "pkg", "__init__.py"), []byte("X = 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fakeManifest(t, dir, benchKey)
	time.Sleep(sign.RacyMargin + 50*time.Millisecond)
	return c, filepath.Join(dir, "lib", "pkg", "__init__.py")
}

// TestVerifiedMarker: a full check records the tree's stamp; a change
// after it (even of the same size, the mtime set back) is still found;
// a marker another user could have written is not trusted.
func TestVerifiedMarker(t *testing.T) {
	c, mod := fakeEnv(t)
	marker := filepath.Join(c.Dir, markerDir, benchKey)
	if _, err := c.Lookup(benchKey); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("no marker after a full check: %v", err)
	}
	if _, err := c.Lookup(benchKey); err != nil {
		t.Fatalf("Lookup by the marker: %v", err)
	}
	st, _ := os.Stat(mod)
	if err := os.WriteFile(mod, []byte("X = 66\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(mod, st.ModTime(), st.ModTime())
	if _, err := c.Lookup(benchKey); !errors.Is(err, ErrTampered) {
		t.Fatalf("a change after the marker: %v", err)
	}
	// A marker forged for the changed tree is trusted only when it and
	// its folder are the caller's alone.
	forge := func() {
		stamp, err := treestamp.Tree(c.Path(benchKey), maxStampEntries)
		m, _ := readManifest(c.Path(benchKey))
		os.Remove(marker)
		if err != nil || os.WriteFile(marker, markerLine(stamp.Sum, m.Digest), 0o600) != nil {
			t.Fatal(err)
		}
	}
	forge()
	if _, err := c.Lookup(benchKey); err != nil {
		t.Fatalf("the caller's own marker (who may rewrite the manifest too): %v", err)
	}
	other := 65534 // only root may give a file away: as another user the case is skipped
	if os.Geteuid() == other {
		other = 65533
	}
	for _, tt := range []struct {
		name  string
		setup func() error
	}{
		{"writable by others", func() error { return os.Chmod(marker, 0o666) }},
		{"folder writable by others", func() error { return os.Chmod(filepath.Dir(marker), 0o777) }},
		{"another owner", func() error { return os.Chown(marker, other, other) }},
	} {
		os.Chmod(filepath.Dir(marker), 0o700)
		forge()
		if err := os.WriteFile(mod, []byte("X = 77\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		forge() // the forger's stamp of the changed tree...
		if err := tt.setup(); err != nil {
			if tt.name == "another owner" {
				t.Logf("%s: %v (not root)", tt.name, err)
				continue
			}
			t.Fatal(err)
		}
		// ...with a manifest that does not match: only a trusted marker
		// would hide the change.
		if _, err := c.Lookup(benchKey); !errors.Is(err, ErrTampered) {
			t.Errorf("%s: a marker for a changed tree was trusted: %v", tt.name, err)
		}
		os.WriteFile(mod, []byte("X = 66\n"), 0o644)
	}
}

// TestProtect: a run whose write grant holds the cache cannot change an
// environment or its marker (without Protect it can), and a write grant
// inside the cache is refused.
func TestProtect(t *testing.T) {
	c, mod := fakeEnv(t)
	if _, err := c.Lookup(benchKey); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(c.Dir, markerDir, benchKey)
	parent := filepath.Dir(c.Dir)
	script := "echo 'X = 1' > " + mod + "; echo forged > " + marker + "; mkdir " + filepath.Join(c.Dir, "planted")
	for _, protect := range []bool{false, true} {
		sb := run.Sandbox{SkillDir: t.TempDir(), WritePaths: []string{parent}}
		if protect {
			if err := c.Protect(&sb); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := os.ReadFile(mod)
		res, err := sb.Command(context.Background(), []string{"sh", "-c", script})
		if errors.Is(err, run.ErrIsolation) {
			t.Skipf("no sandbox here: %v", err)
		}
		after, _ := os.ReadFile(mod)
		_, planted := os.Stat(filepath.Join(c.Dir, "planted"))
		changed := string(after) != string(before) || planted == nil
		if protect && (err != nil || res.ExitCode == 0 || changed) {
			t.Errorf("protected: err %v exit %+v changed %v", err, res, changed)
		}
		if !protect && !changed {
			t.Errorf("unprotected run did not change the cache (err %v): the test shows nothing", err)
		}
		// Put it back as the caller.
		os.WriteFile(mod, before, 0o644)
		os.Remove(filepath.Join(c.Dir, "planted"))
	}
	sb := run.Sandbox{WritePaths: []string{filepath.Join(c.Path(benchKey), "lib")}}
	if err := c.Protect(&sb); !errors.Is(err, run.ErrBadConfig) || !strings.Contains(err.Error(), "lies in the cache") {
		t.Errorf("write grant inside the cache: %v", err)
	}
	// A missing cache below a write grant is made, then protected.
	c2 := Cache{Dir: filepath.Join(t.TempDir(), "later", "envs")}
	sb = run.Sandbox{WritePaths: []string{filepath.Dir(filepath.Dir(c2.Dir))}}
	if err := c2.Protect(&sb); err != nil || len(sb.ReadOnlyPaths) != 1 {
		t.Errorf("missing cache: %v %v", err, sb.ReadOnlyPaths)
	}
}
