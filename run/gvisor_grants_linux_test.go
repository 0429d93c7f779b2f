package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// grantProbe prints, for each argument r:PATH or w:PATH, whether the
// script could read or write PATH.
const grantProbe = `for a in "$@"; do
  p=${a#?:}
  case $a in
    r:*) if cat "$p" >/dev/null 2>&1; then echo "read $p ok"; else echo "read $p denied"; fi ;;
    w:*) if echo x > "$p" 2>/dev/null; then echo "write $p ok"; else echo "write $p denied"; fi ;;
  esac
done
`

// gvisorGrantTree makes, in a folder the run's identity can reach: data (0755)
// with pub.txt (0644), priv.txt (0600) and hidden/x.txt; shared, a write
// folder of uid 65534's with .git/config. It returns the base folder.
func gvisorGrantTree(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	files := map[string]os.FileMode{"data/pub.txt": 0o644, "data/priv.txt": 0o600, "data/hidden/x.txt": 0o644, "shared/.git/config": 0o644}
	for name, mode := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("v\n"), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
	}
	for _, d := range []string{filepath.Dir(filepath.Dir(base)), filepath.Dir(base), base, filepath.Join(base, "data"), filepath.Join(base, "data", "hidden"), filepath.Join(base, "shared")} {
		os.Chmod(d, 0o755)
	}
	if os.Geteuid() == 0 {
		for _, p := range []string{"shared", "shared/.git", "shared/.git/config"} {
			if err := os.Chown(filepath.Join(base, p), nobodyUID, nobodyUID); err != nil {
				t.Fatal(err)
			}
		}
	}
	return base
}

// TestGVisorGrantsLikeNative: read, write and read-only grants, a folder
// to be made and a deny mask give the script under gVisor what they give
// it natively, for a root caller (folder grants by others' bits) and for
// any other (its own files).
func TestGVisorGrantsLikeNative(t *testing.T) {
	needRunsc(t)
	base := gvisorGrantTree(t)
	data, shared := filepath.Join(base, "data"), filepath.Join(base, "shared")
	skill := gvisorSkill(t, grantProbe)
	var outs [2]string
	for i, b := range []string{BackendNative, BackendGVisor} {
		made := filepath.Join(base, "made-"+b)
		sb := Sandbox{
			Backend:    b,
			ReadPaths:  []string{data},
			WritePaths: []string{shared, made},
			DenyPaths:  []string{filepath.Join(data, "hidden")},
		}
		o := runIn(t, sb, skill, "scripts/k.sh",
			"r:"+data+"/pub.txt", "r:"+data+"/priv.txt", "r:"+data+"/hidden/x.txt", "w:"+data+"/pub.txt",
			"w:"+shared+"/new.txt", "w:"+shared+"/.git/config", "w:"+made+"/out.txt", "r:/etc/shadow")
		if o.err != nil || o.res.ExitCode != 0 {
			t.Fatalf("%s: err %v, exit %d, stderr %q", b, o.err, o.res.ExitCode, o.stderr)
		}
		outs[i] = strings.ReplaceAll(o.stdout, made, "MADE")
		if b, err := os.ReadFile(filepath.Join(made, "out.txt")); err != nil || string(b) != "x\n" {
			t.Errorf("%s: the made folder holds %q, %v", b, b, err)
		}
	}
	t.Logf("gvisor:\n%s", outs[1])
	want := map[string]string{"pub.txt ok": "read", "hidden/x.txt denied": "read", "new.txt ok": "write", ".git/config denied": "write", "MADE/out.txt ok": "write", "/etc/shadow denied": "read"}
	if os.Geteuid() == 0 {
		want["priv.txt denied"] = "read"
	}
	for s, verb := range want {
		if !strings.Contains(outs[1], verb+" ") || !strings.Contains(outs[1], s) {
			t.Errorf("gvisor: no %q line for %s", s, verb)
		}
	}
	if outs[0] != outs[1] {
		t.Errorf("native:\n%s\ngvisor:\n%s", outs[0], outs[1])
	}
}

// TestGVisorRootGrantsRefused: what the native backend gives a root
// caller's script only through an id-mapped mount (a file others may not
// read, named exactly; a write folder of root's) is refused under
// gVisor with the fix, never given as root's or dropped.
func TestGVisorRootGrantsRefused(t *testing.T) {
	needRunsc(t)
	if os.Geteuid() != 0 {
		t.Skip("the id-mapped grants are a root caller's")
	}
	base := gvisorGrantTree(t)
	rootOut := filepath.Join(base, "root-out")
	if err := os.Mkdir(rootOut, 0o755); err != nil {
		t.Fatal(err)
	}
	skill := gvisorSkill(t, grantProbe)
	for _, sb := range []Sandbox{
		{ReadPaths: []string{filepath.Join(base, "data", "priv.txt")}},
		{WritePaths: []string{rootOut}},
	} {
		sb.Backend = BackendGVisor
		o := runIn(t, sb, skill, "scripts/k.sh", "w:"+rootOut+"/x")
		if !errors.Is(o.err, ErrBadConfig) || o.res.Started || !strings.Contains(o.err.Error(), "chmod") {
			t.Errorf("%v %v: started %v, err %v; want ErrBadConfig with the fix", sb.ReadPaths, sb.WritePaths, o.res.Started, o.err)
		}
		// Natively the same grant runs, id-mapped.
		sb.Backend = BackendNative
		if o := runIn(t, sb, skill, "scripts/k.sh"); o.err != nil {
			t.Errorf("native %v %v: %v", sb.ReadPaths, sb.WritePaths, o.err)
		}
	}
	if _, err := os.Stat(filepath.Join(rootOut, "x")); err == nil {
		t.Error("the refused run wrote in root's folder")
	}
}
