//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/internal/minipdf"
)

// grantRun is what a usability case with file grants prepares: the extra
// flags and arguments, the runner's working directory (relative grants
// are resolved against it), a check of the outcome and a cleanup.
type grantRun struct {
	flags, args []string
	dir         string
	check       func(o *outcome) error
	cleanup     func()
}

// grantCases are real-shaped skills that need files of the user: each
// works under the default flags plus --read, --write and --cwd, on files
// in a private (0700, as mktemp -d makes) folder.
func grantCases() []*usabilityCase {
	return []*usabilityCase{
		{Skill: "csv-report", Script: "report.py", What: "read a CSV (--read), write JSON+CSV into --write out/ (created)", setup: csvReport},
		{Skill: "pdf-text", Script: "pdf_text.py", What: "extract text from a PDF made here (--read)", setup: pdfText},
		{Skill: "notes-convert", Script: "convert.py", What: "--cwd with relative args, output in --write", setup: notesConvert},
	}
}

// privateDir makes the case's 0700 folder.
func privateDir() (string, func(), error) {
	d, err := os.MkdirTemp("", "skill-sandbox-usability-grants-")
	if err != nil {
		return "", nil, err
	}
	return d, func() { os.RemoveAll(d) }, nil
}

func csvReport() (*grantRun, error) {
	d, cleanup, err := privateDir()
	if err != nil {
		return nil, err
	}
	csv := "region,amount\nnorth,10.5\nsouth,20\nnorth,4.5\neast,7\n"
	if err := os.WriteFile(filepath.Join(d, "sales.csv"), []byte(csv), 0o600); err != nil {
		cleanup()
		return nil, err
	}
	out := filepath.Join(d, "out")
	return &grantRun{
		flags: []string{"--read", "sales.csv", "--write", "out"},
		args:  []string{filepath.Join(d, "sales.csv"), out},
		dir:   d,
		check: func(o *outcome) error {
			if err := wantFile(filepath.Join(out, "by_region.csv"), "region,amount\r\neast,7.00\r\nnorth,15.00\r\nsouth,20.00\r\n"); err != nil {
				return err
			}
			if err := wantFile(filepath.Join(out, "summary.json"), `{"rows": 4, "total": 42.0}`); err != nil {
				return err
			}
			return wantArtifacts(o, out, "by_region.csv", "summary.json")
		},
		cleanup: cleanup,
	}, nil
}

func pdfText() (*grantRun, error) {
	d, cleanup, err := privateDir()
	if err != nil {
		return nil, err
	}
	pdf, err := minipdf.OnePage([]string{"Quarterly report", "Revenue up 12% (EMEA)"})
	if err == nil {
		err = os.WriteFile(filepath.Join(d, "report.pdf"), pdf, 0o600)
	}
	if err != nil {
		cleanup()
		return nil, err
	}
	p := filepath.Join(d, "report.pdf")
	return &grantRun{
		flags: []string{"--read", "report.pdf"},
		args:  []string{p},
		dir:   d,
		check: func(o *outcome) error {
			if want := "pages=1 text=Quarterly report | Revenue up 12% (EMEA)"; summary(o) != want {
				return fmt.Errorf("extracted %q, want %q", summary(o), want)
			}
			return nil
		},
		cleanup: cleanup,
	}, nil
}

func notesConvert() (*grantRun, error) {
	d, cleanup, err := privateDir()
	if err != nil {
		return nil, err
	}
	project := filepath.Join(d, "project")
	if err := os.MkdirAll(project, 0o700); err != nil {
		cleanup()
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(project, "notes.txt"), []byte("Meeting\nship grants\n\nwrite docs\n"), 0o600); err != nil {
		cleanup()
		return nil, err
	}
	return &grantRun{
		flags: []string{"--read", "project", "--write", "project/out", "--cwd", "project"},
		args:  []string{"notes.txt", "out/notes.md"},
		dir:   d,
		check: func(o *outcome) error {
			if err := wantFile(filepath.Join(project, "out", "notes.md"), "# Meeting\n\n- ship grants\n- write docs\n"); err != nil {
				return err
			}
			return wantArtifacts(o, filepath.Join(project, "out"), "notes.md")
		},
		cleanup: cleanup,
	}, nil
}

// wantFile checks a file's content.
func wantFile(p, want string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	if string(b) != want {
		return fmt.Errorf("%s: %q, want %q", filepath.Base(p), b, want)
	}
	return nil
}

// wantArtifacts checks that the record lists exactly names in dir as
// created, with the SHA-256 of the files on disk.
func wantArtifacts(o *outcome, dir string, names ...string) error {
	arts, _ := o.record["artifacts"].(map[string]any)
	files, _ := arts["files"].([]any)
	if len(files) != len(names) {
		return fmt.Errorf("record lists %d artifacts, want %d: %v", len(files), len(names), arts)
	}
	for i, f := range files {
		a, _ := f.(map[string]any)
		p := filepath.Join(dir, names[i])
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		if a["path"] != p || a["action"] != "created" || a["sha256"] != hex.EncodeToString(sum[:]) {
			return fmt.Errorf("artifact %d: %v, want %s created with its hash", i, a, p)
		}
	}
	return nil
}
