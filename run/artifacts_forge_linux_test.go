package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// forgeScript changes files in the write grant (argv[1]) and hides each
// change from size, mtime and mode, printing the name of each trick that
// the sandbox let through.
const forgeScript = `import os, sys
d = sys.argv[1]
def done(name): print("done", name, flush=True)
p = os.path.join(d, "rewritten")
st = os.stat(p)
with open(p, "r+b") as f:
    f.write(b"HELLO")
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
done("rewritten")
p = os.path.join(d, "xattr")
try:
    os.setxattr(p, "user.planted", b"x")
    done("xattr")
except OSError as e:
    print("xattr", e)
p = os.path.join(d, "chmod")
os.chmod(p, 0o777)
os.chmod(p, 0o666)
done("chmod")
p = os.path.join(d, "reused")
st = os.stat(p)
os.remove(p)
with open(p, "wb") as f:
    f.write(b"jello world")
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
done("reused")
`

// TestArtifactsForgedInRun runs a script that rewrites a file in place
// and resets its times, sets an extended attribute, changes a mode and
// back, and replaces a file with a same-size one with the old times:
// each change the sandbox let through is in the record as modified.
// Before, the record said artifacts: [].
func TestArtifactsForgedInRun(t *testing.T) {
	needTool(t, "python3")
	out := worldDir(t, filepath.Join(grantTree(t), "out"))
	for _, name := range []string{"rewritten", "xattr", "chmod", "reused"} {
		p := filepath.Join(out, name)
		writeFile(t, p, "hello world")
		// The caller's own files: a root caller's write grant is
		// id-mapped, so its script owns them and may reset their times.
		os.Chmod(p, 0o666)
	}
	dir := newSkill(t, map[string]string{"forge.py": forgeScript})
	o := runIn(t, Sandbox{WritePaths: []string{out}}, dir, "forge.py", out)
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	listed := map[string]string{}
	for _, a := range o.res.Artifacts.Files {
		listed[filepath.Base(a.Path)] = a.Action
	}
	for _, name := range []string{"rewritten", "xattr", "chmod", "reused"} {
		if !strings.Contains(o.stdout, "done "+name+"\n") {
			t.Logf("%s: not done in the sandbox (%q)", name, o.stdout)
			continue
		}
		if listed[name] != ArtifactModified {
			t.Errorf("%s: changed in the sandbox, listed as %q (artifacts %+v)", name, listed[name], o.res.Artifacts.Files)
		}
	}
	if !strings.Contains(o.stdout, "done rewritten\n") {
		t.Errorf("the script could not rewrite a file of its write grant: %q %q", o.stdout, o.stderr)
	}
}
