package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnusableGrantRefused: an unprivileged caller's sandbox runs as the
// caller, so a grant the caller cannot use itself (--read /root as uid
// 65534, a folder of mode 000) would only give the script EACCES. The run
// is refused before it starts, with the path and what is missing, as a
// root caller's is when uid 65534 cannot use a grant. TestUnprivileged
// runs it as nobody.
func TestUnusableGrantRefused(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("for an unprivileged caller; TestUnprivileged re-runs it as nobody")
	}
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"ok.py": "print('ran')\n"})
	base := t.TempDir()
	mk := func(name string, mode os.FileMode, folder bool) string {
		p := filepath.Join(base, name)
		var err error
		if folder {
			err = os.Mkdir(p, 0o700)
		} else {
			err = os.WriteFile(p, []byte("data\n"), 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(p, 0o700) }) // so that TempDir can remove it
		return p
	}
	readable := mk("readable", 0o755, true)
	noCwd := filepath.Join(readable, "nocwd")
	if err := os.Mkdir(noCwd, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(noCwd, 0o600)
	t.Cleanup(func() { os.Chmod(noCwd, 0o700) })
	cases := []struct {
		name string
		sb   Sandbox
		path string // named in the error
		how  string
	}{
		{"a folder of mode 000 for --read", Sandbox{ReadPaths: []string{mk("closed", 0, true)}}, filepath.Join(base, "closed"), "not readable"},
		{"a file of mode 0200 for --read", Sandbox{ReadPaths: []string{mk("wo.txt", 0o200, false)}}, filepath.Join(base, "wo.txt"), "not readable"},
		{"a folder of mode 0555 for --write", Sandbox{WritePaths: []string{mk("ro", 0o555, true)}}, filepath.Join(base, "ro"), "not writable"},
		{"a folder of mode 0600 for --cwd", Sandbox{ReadPaths: []string{readable}, Cwd: noCwd}, noCwd, "not searchable"},
	}
	if st, err := os.Stat("/root"); err == nil && st.Mode().Perm()&0o005 != 0o005 {
		cases = append(cases, struct {
			name string
			sb   Sandbox
			path string
			how  string
		}{"/root for --read", Sandbox{ReadPaths: []string{"/root"}}, "/root", "not readable"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := runIn(t, c.sb, dir, "ok.py")
			if !errors.Is(o.err, ErrBadConfig) || o.res.Started {
				t.Fatalf("err %v started %v stdout %q, want ErrBadConfig before the start", o.err, o.res.Started, o.stdout)
			}
			if msg := o.err.Error(); !strings.Contains(msg, c.path+" is "+c.how) {
				t.Errorf("error %q does not say %s is %s", msg, c.path, c.how)
			}
		})
	}
}
