package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fontCache is the host's fontconfig cache the sandbox shows read-only.
const fontCache = "/var/cache/fontconfig"

// fontCacheScript lists the fonts with fontconfig, then prints the cache
// files fontconfig wrote into $HOME (none when it used the host's) and
// whether the host's cache folder could be written.
const fontCacheScript = `fc-list >/dev/null || echo "fc-list failed"
for f in "$HOME"/.cache/fontconfig/*; do
  [ -e "$f" ] && echo "wrote $f"
done
if ls ` + fontCache + ` | grep -q cache; then echo "cache listed"; fi
if touch ` + fontCache + `/probe-$$ 2>/dev/null; then echo "cache writable"; rm -f ` + fontCache + `/probe-$$; fi
echo done
`

// TestFontCacheShared runs fc-list in the sandbox with each of the two
// layers that show /var/cache/fontconfig (the mount tree and the Landlock
// read rule) alone and together: fontconfig must use the host's cache,
// writing none into $HOME (the work folder), and the cache folder must be
// read-only. Without it fontconfig rebuilt its cache into $HOME on every
// run, seconds with many fonts (LibreOffice, matplotlib, ImageMagick).
func TestFontCacheShared(t *testing.T) {
	needTool(t, "fc-list")
	if st, err := os.Stat(fontCache); err != nil || !st.IsDir() {
		t.Skipf("the host has no %s (%v)", fontCache, err)
	}
	// On the host first: a stale cache is rebuilt into $HOME there too,
	// and the sandbox could then do no better.
	home := t.TempDir()
	cmd := exec.Command("fc-list")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME=")
	if err := cmd.Run(); err != nil {
		t.Skipf("fc-list fails on the host: %v", err)
	}
	if written, _ := filepath.Glob(filepath.Join(home, ".cache", "fontconfig", "*")); len(written) > 0 {
		t.Skipf("the host's font cache is stale (fc-list wrote %v; run fc-cache): nothing to share", written)
	}
	dir := newSkill(t, map[string]string{"fonts.sh": fontCacheScript})
	for _, c := range []struct {
		name    string
		disable []Layer
	}{
		{name: "both layers"},
		{name: "mount tree alone", disable: []Layer{LayerLandlockFS}},
		{name: "Landlock alone", disable: []Layer{LayerMountNS}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if degradedRerun() && c.name != "Landlock alone" {
				t.Skip("needs the mount namespace")
			}
			o := runIn(t, Sandbox{Disable: c.disable, UseWorkDir: true}, dir, "fonts.sh")
			if o.err != nil || !strings.Contains(o.stdout, "done") {
				t.Fatalf("err %v stdout %q stderr %q", o.err, o.stdout, o.stderr)
			}
			for _, bad := range []string{"fc-list failed", "wrote ", "cache writable"} {
				if strings.Contains(o.stdout, bad) {
					t.Errorf("%q in the output:\n%s", bad, o.stdout)
				}
			}
			if !strings.Contains(o.stdout, "cache listed") {
				t.Errorf("the host's cache is not shown:\n%s", o.stdout)
			}
		})
	}
}
