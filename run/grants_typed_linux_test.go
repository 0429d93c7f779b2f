package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// typedScript performs each "kind=path" argument and prints what came of
// it: read a file, write one, or list a folder.
const typedScript = `import os, sys
for op in sys.argv[1:]:
    kind, path = op.split("=", 1)
    try:
        if kind == "read":
            print("read", path, open(path).read().strip())
        elif kind == "write":
            open(path, "w").write("made")
            print("wrote", path)
        elif kind == "list":
            print("list", path, ",".join(sorted(os.listdir(path))))
    except OSError as e:
        print("blocked", path, e.strerror)
`

// TestGrantTypedThroughSymlink: a grant typed through a symlink
// (--read ~/datalink, ~/datalink -> /mnt/data) works at the path as typed
// inside the sandbox, for --read, --write, --cwd, a file reached through a
// symlinked folder and a chain of symlinks; with the links in the root
// tmpfs (/var/tmp) and in the private /tmp, and with either file layer
// alone (without the mount namespace the host's symlinks are seen), and
// from a pooled init process, whose root is built ahead. The
// alias widens nothing, whichever layer is left: a sibling of a file grant
// stays out of reach, and a --read grant stays read-only through it.
func TestGrantTypedThroughSymlink(t *testing.T) {
	needTool(t, "python3")
	fallback := os.Getenv(noUserNSEnv) == "1"
	if !fallback {
		fullIsolation(t)
	}
	dir := newSkill(t, map[string]string{"typed.py": typedScript})
	var pool *Pool // a pooled init process builds its root ahead (prebuildRoot)
	if !fallback {
		pool = newTestPool(t, 1, 0, Sandbox{})
	}
	mkTemp := func(where string) string {
		d, err := os.MkdirTemp(where, "skill-sandbox-typed-")
		if err != nil {
			t.Skipf("no folder in %s: %v", where, err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		os.Chmod(d, 0o755)
		return d
	}
	data := mkTemp("")
	for name, body := range map[string]string{"x.txt": "X-DATA", "sibling.txt": "SIBLING-SECRET"} {
		if err := os.WriteFile(filepath.Join(data, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := worldDir(t, filepath.Join(mkTemp(""), "out"))
	link := func(target, p string) string {
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, where := range []string{"/var/tmp", os.TempDir()} {
		links := mkTemp(where)
		dl := link(data, filepath.Join(links, "datalink"))
		ol := link(out, filepath.Join(links, "outlink"))
		c1 := link(link(data, filepath.Join(links, "chain2")), filepath.Join(links, "chain1"))
		for _, c := range []struct {
			name string
			sb   Sandbox
			args []string
			want []string // lines of stdout
		}{
			{"--read a folder through a symlink",
				Sandbox{ReadPaths: []string{dl}}, []string{"read=" + dl + "/x.txt", "list=" + dl, "write=" + dl + "/planted"},
				[]string{"read " + dl + "/x.txt X-DATA", "list " + dl + " sibling.txt,x.txt", "blocked " + dl + "/planted"}},
			{"--write a folder through a symlink",
				Sandbox{WritePaths: []string{ol}}, []string{"write=" + ol + "/report.csv"},
				[]string{"wrote " + ol + "/report.csv"}},
			{"--read a file through a symlinked folder",
				Sandbox{ReadPaths: []string{dl + "/x.txt"}}, []string{"read=" + dl + "/x.txt", "read=" + dl + "/sibling.txt"},
				[]string{"read " + dl + "/x.txt X-DATA", "blocked " + dl + "/sibling.txt"}},
			{"--read through a chain of symlinks",
				Sandbox{ReadPaths: []string{c1}}, []string{"read=" + c1 + "/x.txt"},
				[]string{"read " + c1 + "/x.txt X-DATA"}},
			{"--read a symlink inside another --read grant (the host's own symlink)",
				Sandbox{ReadPaths: []string{links, dl}}, []string{"read=" + dl + "/x.txt", "read=" + c1 + "/x.txt"},
				[]string{"read " + dl + "/x.txt X-DATA", "read " + c1 + "/x.txt X-DATA"}},
			{"--cwd through a symlink",
				Sandbox{ReadPaths: []string{data}, Cwd: dl}, []string{"read=x.txt", "read=" + dl + "/x.txt"},
				[]string{"read x.txt X-DATA", "read " + dl + "/x.txt X-DATA"}},
		} {
			modes := map[string][]Layer{"full sandbox": nil, "Landlock alone": {LayerMountNS}, "mount namespace alone": {LayerLandlockFS}}
			if fallback {
				modes = map[string][]Layer{"no namespaces": nil}
			}
			if pool != nil {
				modes["pooled stage"] = nil
			}
			for mode, disable := range modes {
				t.Run(where+"/"+c.name+"/"+mode, func(t *testing.T) {
					os.Remove(filepath.Join(out, "report.csv"))
					sb := c.sb
					sb.Disable = disable
					if mode == "pooled stage" {
						sb.Pool = pool
					}
					o := runIn(t, sb, dir, "typed.py", c.args...)
					if o.err != nil || o.res.ExitCode != 0 {
						t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
					}
					for _, w := range c.want {
						if !strings.Contains("\n"+o.stdout, "\n"+w) {
							t.Errorf("want a line %q, stdout:\n%s", w, o.stdout)
						}
					}
					if _, err := os.Lstat(filepath.Join(data, "planted")); err == nil {
						t.Errorf("the script wrote into the --read grant through its alias")
					}
					if sb.WritePaths != nil {
						if b, err := os.ReadFile(filepath.Join(out, "report.csv")); err != nil || string(b) != "made" {
							t.Errorf("the write through the alias did not reach the host: %q %v", b, err)
						}
					}
				})
			}
		}
	}
}
