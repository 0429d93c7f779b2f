package run

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// chmodScript gives others write permission on what it is pointed at
// (the grant, a file of the caller's) and makes a file and a folder
// others may write, whatever the umask.
const chmodScript = `import os, sys
g = sys.argv[1]
for p, mode in ((g, 0o777), (os.path.join(g, "Makefile"), 0o666)):
    try:
        os.chmod(p, mode)
        print("chmod %s: ok" % os.path.basename(p))
    except OSError as e:
        print("chmod %s: %s" % (os.path.basename(p), e))
fd = os.open(os.path.join(g, "new.txt"), os.O_WRONLY | os.O_CREAT, 0o600)
os.fchmod(fd, 0o666)
os.close(fd)
os.mkdir(os.path.join(g, "open"))
os.chmod(os.path.join(g, "open"), 0o1777)
with open(os.path.join(g, "shared.txt"), "a") as f:
    f.write("more\n")
`

// TestOthersWriteRestricted: a script in a write grant runs as the
// caller, so it can give every local user write permission on the
// caller's files and on what it makes; after the run, the sweep takes
// others' write permission back from each such entry (and lists it),
// and keeps the mode of a file the caller had made writable by others.
func TestOthersWriteRestricted(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"chmod.py": chmodScript})
	base := grantTree(t)
	w := filepath.Join(base, "grant")
	if err := os.Mkdir(w, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, mode := range map[string]os.FileMode{"Makefile": 0o644, "shared.txt": 0o666} {
		p := filepath.Join(w, name)
		if err := os.WriteFile(p, []byte("x\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	o := runIn(t, Sandbox{WritePaths: []string{w}}, dir, "chmod.py", w)
	if o.err != nil || o.res.ExitCode != 0 {
		t.Skipf("the run could not use the grant as its owner here (err %v, exit %d): %s%s", o.err, exitOf(o.res), o.stdout, o.stderr)
	}
	want := map[string]os.FileMode{"new.txt": 0o664, "open": 0o775 | os.ModeSticky}
	if strings.Contains(o.stdout, "chmod grant: ok") {
		want[""] = 0o775
	}
	if strings.Contains(o.stdout, "chmod Makefile: ok") {
		want["Makefile"] = 0o664
	}
	t.Logf("script: %s", o.stdout)
	for rel, mode := range want {
		p := filepath.Join(w, rel)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		got := fi.Mode().Perm() | fi.Mode()&os.ModeSticky
		if got&0o002 != 0 || got|0o002 != mode|0o002 {
			t.Errorf("%q: mode %v after the run, want %v", rel, got, mode)
		}
		if !slices.ContainsFunc(o.res.Artifacts.Neutralised, func(n Neutralised) bool {
			return n.Path == p && n.Kind == "writable" && n.Action == NeutralisedRestricted
		}) {
			t.Errorf("%q not listed as restricted: %+v", rel, o.res.Artifacts.Neutralised)
		}
	}
	if fi, err := os.Stat(filepath.Join(w, "shared.txt")); err != nil || fi.Mode().Perm() != 0o666 {
		t.Errorf("the caller's own 0666 file lost its mode: %v %v", fi.Mode(), err)
	}
	if len(o.res.Artifacts.Neutralised) != len(want) {
		t.Errorf("Neutralised %+v, want %d entries", o.res.Artifacts.Neutralised, len(want))
	}
}
