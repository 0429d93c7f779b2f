package run

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// keptTrapScript leaves in its work folder what leads a reader on the
// host elsewhere: a symlink to a file of the caller's, one climbing out
// and a FIFO; and what stays, a file and a symlink inside.
const keptTrapScript = `import os, sys
os.symlink(sys.argv[1], "result.txt")
os.symlink("../../../../../../etc", "up")
os.mkfifo("summary.txt")
open("ok.txt", "w").write("fine\n")
os.symlink("ok.txt", "inside")
print("made")
`

// TestKeptWorkDirTrapsNeutralised: a kept work folder (--keep-workdir) is
// a folder of the host the caller reads after the run, as root perhaps:
// the script's symlinks leading out of it and its FIFO are removed and
// listed as in a write grant (TestOutputTrapsNeutralised), the rest kept.
func TestKeptWorkDirTrapsNeutralised(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"trap.py": keptTrapScript})
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := runIn(t, Sandbox{UseWorkDir: true, KeepWorkDir: true}, dir, "trap.py", secret)
	if o.res.WorkDir != "" {
		t.Cleanup(func() { os.RemoveAll(o.res.WorkDir) })
	}
	if o.err != nil || o.res.ExitCode != 0 || !strings.Contains(o.stdout, "made") {
		t.Fatalf("err %v exit %d stdout %s stderr %s", o.err, o.res.ExitCode, o.stdout, o.stderr)
	}
	w := o.res.WorkDir
	for name, kind := range map[string]string{"result.txt": "symlink", "up": "symlink", "summary.txt": "fifo"} {
		p := filepath.Join(w, name)
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still in the kept work folder", name)
		}
		if !slices.ContainsFunc(o.res.Artifacts.Neutralised, func(n Neutralised) bool {
			return n.Path == p && n.Kind == kind && n.Action == NeutralisedRemoved
		}) {
			t.Errorf("%s (%s) not in Neutralised %+v", name, kind, o.res.Artifacts.Neutralised)
		}
	}
	for _, keep := range []string{"ok.txt", "inside"} {
		if _, err := os.Lstat(filepath.Join(w, keep)); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
}

// TestKeptWorkDirSharedTMPDIR: a kept work folder is named by its path
// for the run's life (watched, listed, swept as the caller): it is not
// made in a TMPDIR another user may rename in (workdir.RenameSafe), and
// the run is refused before its script starts.
func TestKeptWorkDirSharedTMPDIR(t *testing.T) {
	dir := newSkill(t, map[string]string{"trap.py": keptTrapScript})
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", shared)
	o := runIn(t, Sandbox{UseWorkDir: true, KeepWorkDir: true}, dir, "trap.py", "x")
	if o.err == nil || !strings.Contains(o.err.Error(), "another user may rename in "+shared) || o.res.Started {
		t.Fatalf("a kept work folder in a 0777 TMPDIR: started %v, err %v", o.res.Started, o.err)
	}
	if ents, _ := os.ReadDir(shared); len(ents) != 0 {
		t.Errorf("the refused run left %d entries in TMPDIR", len(ents))
	}
}
