package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestScriptSymlinkPastWalkLimit: a root caller's script plants a symlink
// deeper than walk.NoFollow descends (walk.MaxDepth), and a second one
// next to a tree that makes the walk stop early. Each must be given to
// uid 65534 after the run like any other (see unplantSymlinks); one left
// to root would be followed by a later grant that names a path through it
// (`--write out/charts`, charts -> /etc/cron.d), as root's own.
func TestScriptSymlinkPastWalkLimit(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root caller's write grants are id-mapped")
	}
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"plant.py": `import os, sys
out, target = sys.argv[1], sys.argv[2]
deep = os.path.join(out, *(["d"] * 300))
os.makedirs(deep)
os.symlink(target, os.path.join(deep, "charts"))
for i in range(8):
    os.makedirs(os.path.join(out, "t%d" % i, *(["d"] * 300)))
os.symlink(target, os.path.join(out, "charts"))
`})
	out := callerFolder(t)
	target := filepath.Join(filepath.Dir(out), "target")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	// Without the watch, whose walk of the grants stops the run at a tree
	// deeper than it descends: here the links must be made.
	o := runIn(t, Sandbox{WritePaths: []string{out}, Disable: []Layer{LayerWatch}}, dir, "plant.py", out, target)
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d signal %q limit %q stderr %s", o.err, o.res.ExitCode, o.res.Signal, o.res.LimitExceeded, o.stderr)
	}
	for _, link := range []string{
		filepath.Join(out, "charts"),
		filepath.Join(out, strings.Repeat("d/", 300)+"charts"),
	} {
		var st unix.Stat_t
		err := unix.Lstat(link, &st)
		if err == unix.ENOENT {
			continue // removed as a link out of the grant: harmless too
		}
		if err != nil || st.Uid != nobodyUID {
			t.Errorf("%s belongs to uid %d (%v), want %d: a later grant through it is taken as root's own", link[len(out):min(len(link), len(out)+40)], st.Uid, err, nobodyUID)
		}
	}
}
