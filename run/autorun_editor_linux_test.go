package run

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/autorun"
)

// editorFiles are files that editors and dev tools run, source or load
// code from on opening a folder or at every commit (issue 30, round
// three), as paths relative to a write grant.
var editorFiles = []string{
	".venv/bin/activate", ".venv/pyvenv.cfg", "eslint.config.mjs", ".eslintrc.cjs",
	"prettier.config.js", ".prettierrc.cjs", ".lintstagedrc", "lint-staged.config.js",
	".config/mise.toml", "mise.dev.toml", ".pylintrc", "mypy.ini", "gradle.properties",
	"Directory.Build.targets",
}

// editorScript appends to each existing file argv[2:] of the grant
// argv[1] and creates each under new/ (made under another name and
// renamed, which a name check at creation would miss).
const editorScript = `import os, sys
w = sys.argv[1]
for rel in sys.argv[2:]:
    try:
        open(os.path.join(w, rel), "a").write("\nrequire('child_process').execSync('touch /tmp/x')\n")
        print(rel + ": ok")
    except OSError as e:
        print(rel + ": " + os.strerror(e.errno))
    p = os.path.join(w, "new", rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p + ".tmp", "w").write("planted\n")
    os.rename(p + ".tmp", p)
`

// TestEditorFilesReadOnly checks that the files editors and dev tools
// run on their own are read-only in a write grant, by the kernel, where
// they exist, and quarantined and named in the record where the script
// planted them. Without the names on the list (autorun.Matches) the
// appends succeed and the planted files stay.
func TestEditorFilesReadOnly(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"plant.py": editorScript})
	w := worldDir(t, filepath.Join(grantTree(t), "proj"))
	for _, rel := range editorFiles {
		p := filepath.Join(w, rel)
		worldDir(t, filepath.Dir(p))
		if err := os.WriteFile(p, []byte("module.exports = {}\n"), 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, 0o666)
	}
	o := runIn(t, Sandbox{WritePaths: []string{w}}, dir, "plant.py", append([]string{w}, editorFiles...)...)
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	for _, rel := range editorFiles {
		if !strings.Contains(o.stdout, rel+": Read-only file system\n") {
			t.Errorf("%s: writable in the grant:\n%s", rel, o.stdout)
		}
		if !slices.Contains(o.res.Grants.Autorun, filepath.Join(w, rel)) {
			t.Errorf("%s: not in Grants.Autorun %v", rel, o.res.Grants.Autorun)
		}
		planted := filepath.Join(w, "new", rel)
		if _, err := os.Lstat(planted); err == nil {
			t.Errorf("%s: the planted file is still there", rel)
		}
		if _, err := os.Lstat(planted + autorun.QuarantineSuffix); err != nil {
			t.Errorf("%s: not quarantined: %v", rel, err)
		}
	}
}
