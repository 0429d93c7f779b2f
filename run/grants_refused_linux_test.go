package run

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestRefusedRunMakesNoFolder checks that a run refused before its script
// starts leaves no trace on the host: a missing --write folder is created
// while the grants are checked (it must exist to be mounted), and is
// removed again, with the parents made for it, whichever later check
// refuses the run. Folders that existed before are left alone, and a run
// that starts keeps what it created.
func TestRefusedRunMakesNoFolder(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"ok.py": "print('ran')\n"})
	for _, c := range []struct {
		name string
		// sb returns the sandbox; made is the missing folder it asks for.
		sb      func(base, made string) Sandbox
		root    bool  // needs a root caller
		wantErr error // nil: the run starts
	}{
		{name: "a later read grant is missing", wantErr: ErrBadConfig, sb: func(base, made string) Sandbox {
			return Sandbox{WritePaths: []string{made}, ReadPaths: []string{filepath.Join(base, "nope")}}
		}},
		{name: "a later write grant overlaps the skill", wantErr: ErrBadConfig, sb: func(base, made string) Sandbox {
			return Sandbox{WritePaths: []string{made, filepath.Join(dir, "out")}}
		}},
		{name: "the working directory is outside the grants", wantErr: ErrBadConfig, sb: func(base, made string) Sandbox {
			return Sandbox{WritePaths: []string{made}, Cwd: base}
		}},
		{name: "another write folder is not writable by the sandbox identity", root: true, wantErr: ErrBadConfig, sb: func(base, made string) Sandbox {
			// Root's own is id-mapped (TestWriteGrantOwnedByCaller);
			// another user's is not.
			others := filepath.Join(base, "others")
			if err := os.Mkdir(others, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(others, 12345, 12345); err != nil {
				t.Fatal(err)
			}
			return Sandbox{WritePaths: []string{made, others}}
		}},
		{name: "a missing layer refuses the launched run", wantErr: ErrIsolation, sb: func(base, made string) Sandbox {
			return Sandbox{WritePaths: []string{made}, Disable: []Layer{LayerUTSNS}, RequireIsolation: true}
		}},
		{name: "a run that starts keeps it", sb: func(base, made string) Sandbox {
			return Sandbox{WritePaths: []string{made}}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() != 0 {
				t.Skip("only a root caller's sandbox runs as another identity")
			}
			base := t.TempDir()
			os.Chmod(base, 0o755)
			existing := filepath.Join(base, "existing")
			if err := os.Mkdir(existing, 0o755); err != nil {
				t.Fatal(err)
			}
			made := filepath.Join(existing, "new", "out")
			o := runIn(t, c.sb(base, made), dir, "ok.py")
			if c.wantErr == nil {
				if o.err != nil || !o.res.Started {
					t.Fatalf("err %v started %v stderr %s", o.err, o.res.Started, o.stderr)
				}
				if _, err := os.Stat(made); err != nil || len(o.res.Grants.Created) != 1 || o.res.Grants.Created[0] != made {
					t.Errorf("the started run's folder: %v, Created %v", err, o.res.Grants.Created)
				}
				return
			}
			if !errors.Is(o.err, c.wantErr) || o.res.Started {
				t.Fatalf("err %v started %v, want %v before the start", o.err, o.res.Started, c.wantErr)
			}
			if _, err := os.Lstat(filepath.Join(existing, "new")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused run left %s behind (%v)", filepath.Join(existing, "new"), err)
			}
			if _, err := os.Stat(existing); err != nil {
				t.Errorf("a folder that existed before was removed: %v", err)
			}
			if len(o.res.Grants.Created) != 0 {
				t.Errorf("Created %v on a refused run", o.res.Grants.Created)
			}
		})
	}
}
