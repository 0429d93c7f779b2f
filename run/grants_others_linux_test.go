package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readProbe prints, for each path argument, "ok NAME" when it can read
// the file and "denied NAME" when it cannot.
const readProbe = `import os, sys
for p in sys.argv[1:]:
    try:
        open(p).read()
        print("ok", os.path.basename(p))
    except OSError as e:
        print("denied", os.path.basename(p), e.errno)
`

// TestFolderGrantKeepsOthersBits is the red team's --read /etc as root:
// a granted folder others may enter holds a 0710 root:group folder with
// a 0640 key (as /etc/ssl/private), a 0600 file and a 0755 folder with a
// 0600 file. The script reads the world-readable file and none of the
// others: a folder grant gives the sandbox no more than the files' modes
// give to others (the grant is not id-mapped). The same 0600 file named
// exactly (--read FILE) is readable: the user asked for it. As an
// unprivileged caller (TestUnprivileged) the sandbox runs as the caller,
// and the files the caller may not read itself (mode 0) stay closed.
func TestFolderGrantKeepsOthersBits(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"read.py": readProbe})
	base, err := os.MkdirTemp("", "skill-sandbox-others-") // 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	root := os.Geteuid() == 0
	closed := os.FileMode(0o600) // root-only as root; the caller's own otherwise
	if !root {
		closed = 0
	}
	g := filepath.Join(base, "etc")
	files := []struct {
		path string
		mode os.FileMode
	}{
		{"public.txt", 0o644},
		{"secret.txt", closed},
		{"private/key.pem", 0o640},
		{"open/inner.txt", closed},
	}
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{"", 0o755}, {"private", 0o710}, {"open", 0o755}} {
		p := filepath.Join(g, d.path)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, d.mode)
	}
	var paths []string
	for _, f := range files {
		p := filepath.Join(g, f.path)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, f.mode)
		paths = append(paths, p)
	}
	if !root {
		os.Chmod(filepath.Join(g, "private"), 0o010) // no search for its owner
	} else {
		// root:daemon, as /etc/ssl/private is root:ssl-cert
		os.Chown(filepath.Join(g, "private"), 0, 1)
		os.Chown(filepath.Join(g, "private", "key.pem"), 0, 1)
	}
	o := runIn(t, Sandbox{ReadPaths: []string{g}}, dir, "read.py", paths...)
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	for _, want := range []string{"ok public.txt", "denied secret.txt", "denied key.pem", "denied inner.txt"} {
		if !strings.Contains(o.stdout, want+"\n") && !strings.Contains(o.stdout, want+" ") {
			t.Errorf("folder grant: want %q in\n%s", want, o.stdout)
		}
	}
	if !root {
		return // a file of mode 0 is refused by name (TestUnusableGrantRefused)
	}
	secret := filepath.Join(g, "secret.txt")
	o = runIn(t, Sandbox{ReadPaths: []string{secret}}, dir, "read.py", secret)
	if o.err != nil || o.res.ExitCode != 0 || !strings.Contains(o.stdout, "ok secret.txt") {
		t.Errorf("a 0600 file named exactly: err %v exit %d stdout %q stderr %s", o.err, o.res.ExitCode, o.stdout, o.stderr)
	}
}
