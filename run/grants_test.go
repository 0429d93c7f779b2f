//go:build linux

package run

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// grantTree makes a fake home folder layout under a new temporary folder
// and points $HOME at base/home/alice:
//
//	base/home/alice/{.ssh/id_rsa, .netrc, docs/a.txt, docs/link -> ../.ssh/id_rsa, notes.txt}
//	base/data/{in.txt, sibling.txt}
func grantTree(t *testing.T) string {
	t.Helper()
	base, err := os.MkdirTemp("", "skill-sandbox-grants-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	alice := filepath.Join(base, "home", "alice")
	for _, d := range []string{filepath.Join(alice, ".ssh"), filepath.Join(alice, "docs"), filepath.Join(base, "data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, body := range map[string]string{
		filepath.Join(alice, ".ssh", "id_rsa"):     "PRIVATE-KEY\n",
		filepath.Join(alice, "docs", "a.txt"):      "doc a\n",
		filepath.Join(alice, "notes.txt"):          "notes\n",
		filepath.Join(alice, ".netrc"):             "machine example.com password NETRC-SECRET\n",
		filepath.Join(base, "data", "in.txt"):      "hello grants\n",
		filepath.Join(base, "data", "sibling.txt"): "SIBLING-SECRET\n",
	} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../.ssh/id_rsa", filepath.Join(alice, "docs", "link")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", alice)
	return base
}

func TestPlanGrants(t *testing.T) {
	base := grantTree(t)
	skill := filepath.Join(base, "skills", "probe")
	os.MkdirAll(skill, 0o755)
	alice := filepath.Join(base, "home", "alice")
	for _, c := range []struct {
		name    string
		sb      Sandbox
		wantErr string // substring of the error; "" for success
		check   func(t *testing.T, gp *grants.Plan)
	}{
		{name: "root refused", sb: Sandbox{ReadPaths: []string{"/"}}, wantErr: "granting the whole file system is refused"},
		{name: "root through dots refused", sb: Sandbox{ReadPaths: []string{base + "/../../../.."}}, wantErr: "granting the whole file system"},
		{name: "proc refused", sb: Sandbox{ReadPaths: []string{"/proc/self"}}, wantErr: "never granted"},
		{name: "ssh refused", sb: Sandbox{ReadPaths: []string{filepath.Join(alice, ".ssh")}}, wantErr: "is on the deny list"},
		{name: "key inside ssh refused", sb: Sandbox{ReadPaths: []string{filepath.Join(alice, ".ssh", "id_rsa")}}, wantErr: "is on the deny list"},
		{name: "ssh through a symlink refused", sb: Sandbox{ReadPaths: []string{filepath.Join(alice, "docs", "link")}}, wantErr: "is on the deny list"},
		{name: "extra deny entry", sb: Sandbox{ReadPaths: []string{filepath.Join(base, "data")}, DenyPaths: []string{filepath.Join(base, "data")}}, wantErr: "is on the deny list"},
		{name: "extra home-relative deny entry", sb: Sandbox{ReadPaths: []string{filepath.Join(alice, "docs")}, DenyPaths: []string{"~/docs"}}, wantErr: "is on the deny list"},
		{name: "exact allow", sb: Sandbox{ReadPaths: []string{filepath.Join(alice, ".ssh", "id_rsa")}, AllowDenied: []string{filepath.Join(alice, ".ssh", "id_rsa")}},
			check: func(t *testing.T, gp *grants.Plan) {
				if len(gp.Grants.Read) != 1 {
					t.Errorf("read %v", gp.Grants.Read)
				}
			}},
		{name: "allowing a child does not allow the parent", sb: Sandbox{ReadPaths: []string{filepath.Join(alice, ".ssh")}, AllowDenied: []string{filepath.Join(alice, ".ssh", "id_rsa")}}, wantErr: "is on the deny list"},
		{name: "write home refused", sb: Sandbox{WritePaths: []string{alice}}, wantErr: "would let the script create"},
		{name: "write home parent refused", sb: Sandbox{WritePaths: []string{filepath.Join(base, "home")}}, wantErr: "would let the script create"},
		{name: "write a file refused", sb: Sandbox{WritePaths: []string{filepath.Join(base, "data", "in.txt")}}, wantErr: "is not a folder"},
		{name: "write inside the skill refused", sb: Sandbox{WritePaths: []string{filepath.Join(skill, "out")}}, wantErr: "overlaps the skill folder"},
		{name: "write holding the skill refused", sb: Sandbox{WritePaths: []string{filepath.Join(base, "skills")}}, wantErr: "overlaps the skill folder"},
		{name: "missing read", sb: Sandbox{ReadPaths: []string{filepath.Join(base, "nope")}}, wantErr: "no such file"},
		{name: "cwd in a masked folder", sb: Sandbox{ReadPaths: []string{alice}, Cwd: filepath.Join(alice, ".ssh")}, wantErr: "--cwd " + filepath.Join(alice, ".ssh") + " lies in " + filepath.Join(alice, ".ssh") + ", which is on the deny list"},
		{name: "cwd outside the grants", sb: Sandbox{ReadPaths: []string{filepath.Join(base, "data", "in.txt")}, Cwd: filepath.Join(base, "data")}, wantErr: "not inside a --read or --write grant"},
		{name: "read the home parent masks ssh", sb: Sandbox{ReadPaths: []string{filepath.Join(base, "home")}},
			check: func(t *testing.T, gp *grants.Plan) {
				if !slices.Equal(gp.Grants.Masked, []string{filepath.Join(alice, ".netrc"), filepath.Join(alice, ".ssh")}) {
					t.Errorf("masked %v, want %s", gp.Grants.Masked, filepath.Join(alice, ".ssh"))
				}
				want := []stageconfig.GrantRule{
					{Path: filepath.Join(base, "home"), Access: "l"},
					{Path: alice, Access: "l"},
					{Path: filepath.Join(alice, "docs"), Access: "r"},
					{Path: filepath.Join(alice, "notes.txt"), Access: "r"},
				}
				if !slices.Equal(gp.Rules, want) {
					t.Errorf("rules\n%v, want\n%v", gp.Rules, want)
				}
			}},
		{name: "allowed entry is not masked", sb: Sandbox{ReadPaths: []string{alice}, AllowDenied: []string{filepath.Join(alice, ".ssh"), filepath.Join(alice, ".netrc")}},
			check: func(t *testing.T, gp *grants.Plan) {
				if len(gp.Grants.Masked) != 0 || !slices.Equal(gp.Rules, []stageconfig.GrantRule{{Path: alice, Access: "r"}}) {
					t.Errorf("masked %v rules %v", gp.Grants.Masked, gp.Rules)
				}
			}},
		{name: "write created, cwd inside", sb: Sandbox{WritePaths: []string{filepath.Join(base, "out", "sub")}, Cwd: filepath.Join(base, "out", "sub")},
			check: func(t *testing.T, gp *grants.Plan) {
				out := filepath.Join(base, "out", "sub")
				if !slices.Equal(gp.Grants.Created, []string{out}) || gp.Grants.Cwd != out {
					t.Errorf("created %v cwd %q", gp.Grants.Created, gp.Grants.Cwd)
				}
				if st, err := os.Stat(out); err != nil || !st.IsDir() {
					t.Errorf("not created: %v", err)
				}
			}},
		{name: "nested grants parents first", sb: Sandbox{WritePaths: []string{filepath.Join(base, "data", "w")}, ReadPaths: []string{filepath.Join(base, "data")}},
			check: func(t *testing.T, gp *grants.Plan) {
				if len(gp.Mounts) != 2 || gp.Mounts[0].Path != filepath.Join(base, "data") || !gp.Mounts[1].Write {
					t.Errorf("mounts %+v", gp.Mounts)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			gp, err := c.sb.planGrantsNominal(skill, false)
			if c.wantErr != "" {
				if err == nil || !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want ErrBadConfig with %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.check != nil {
				c.check(t, gp)
			}
		})
	}
}

func TestPlanGrantsRelative(t *testing.T) {
	base := grantTree(t)
	skill := ""
	t.Chdir(filepath.Join(base, "data"))
	gp, err := (&Sandbox{ReadPaths: []string{"in.txt"}, WritePaths: []string{"../out"}, Cwd: "../out"}).planGrantsNominal(skill, false)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(base)
	if gp.Grants.Read[0] != filepath.Join(real, "data", "in.txt") || gp.Grants.Write[0] != filepath.Join(real, "out") || gp.Grants.Cwd != filepath.Join(real, "out") {
		t.Errorf("grants %+v", gp.Grants)
	}
}

func TestDefaultDenyPathsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/grants.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range DefaultDenyPaths() {
		if !strings.Contains(string(doc), "`"+d+"`") {
			t.Errorf("docs/grants.md does not list %s", d)
		}
	}
}
