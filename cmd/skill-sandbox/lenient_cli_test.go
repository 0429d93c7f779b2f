package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

// lenientMD is a SKILL.md as public collections write them: keys the
// specification does not list and a description of 1,068 characters (over
// its 1,024 limit), as in one of Anthropic's own skills.
func lenientMD() string {
	return "---\nname: " + e2eSkill + "\ndescription: " + strings.Repeat("d", 1068) +
		"\nversion: 1.0.0\nrequires: [python3]\nauthor: someone\n---\n# Test\n"
}

// TestRunLenient: run and audit run a skill that breaks only the letter of
// the specification, with one warning line per departure on stderr and the
// same departures in the record's validation warnings; --strict and
// validate still refuse it; --quiet silences the lines.
func TestRunLenient(t *testing.T) {
	skill := newSkill(t, map[string]string{"SKILL.md": lenientMD()})
	wantWarnings := []string{
		"skill-sandbox: warning: SKILL.md:3:14: description: Description exceeds 1024 character limit (1068 chars)",
		"skill-sandbox: warning: SKILL.md:4:1: version: Unexpected field in frontmatter: version.",
		"skill-sandbox: warning: SKILL.md:5:1: requires: Unexpected field in frontmatter: requires.",
		"skill-sandbox: warning: SKILL.md:6:1: author: Unexpected field in frontmatter: author.",
	}
	r := runCLI(t, "", "audit", "--allow-degraded", skill, "ok.sh", "x")
	rec := stderrRecord(t, r.Stderr)
	if rec.ErrorKind == audit.KindUnsupported {
		t.Skipf("no sandbox here: %s", rec.Error)
	}
	if r.Code != 0 || !strings.Contains(r.Stdout, "out x") {
		t.Fatalf("audit: exit %d, stdout %q, stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, w := range wantWarnings {
		if !strings.Contains(r.Stderr, "\n"+w) && !strings.HasPrefix(r.Stderr, w) {
			t.Errorf("stderr lacks the line %q:\n%s", w, r.Stderr)
		}
	}
	if !rec.Validation.Valid || len(rec.Validation.Errors) != 0 {
		t.Errorf("record validation %+v, want valid without errors", rec.Validation)
	}
	for _, w := range wantWarnings {
		found := false
		for _, got := range rec.Validation.Warnings {
			found = found || strings.HasPrefix(got, strings.TrimPrefix(w, "skill-sandbox: warning: "))
		}
		if !found {
			t.Errorf("record warnings %q lack %q", rec.Validation.Warnings, w)
		}
	}

	if r := runCLI(t, "", "run", "--allow-degraded", "--quiet", skill, "ok.sh"); r.Code != 0 || strings.Contains(r.Stderr, "warning") {
		t.Errorf("run --quiet: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if r := runCLI(t, "", "run", "--allow-degraded", "--strict", skill, "ok.sh"); r.Code != exitRefused || !strings.Contains(r.Stderr, "Unexpected field") {
		t.Errorf("run --strict: exit %d, want %d refusing; stderr:\n%s", r.Code, exitRefused, r.Stderr)
	}
	if r := runCLI(t, "", "validate", skill); r.Code != 1 || !strings.Contains(r.Stdout, "❌") {
		t.Errorf("validate: exit %d, want 1 (the specification's verdict); stdout:\n%s", r.Code, r.Stdout)
	}
	if r := runCLI(t, "", "validate", "--lenient", skill); r.Code != 0 || !strings.Contains(r.Stdout, "⚠️") {
		t.Errorf("validate --lenient: exit %d, want 0 with warnings; stdout:\n%s", r.Code, r.Stdout)
	}
	if r := runCLI(t, "", "list", skill); r.Code != 0 || !strings.Contains(r.Stderr, "skill-sandbox: warning: ") || !strings.Contains(r.Stdout, "ok.sh") {
		t.Errorf("list: exit %d, want 0 with warnings; stdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	noName := newSkill(t, map[string]string{"SKILL.md": "---\ndescription: d\nversion: 1\n---\n"})
	if r := runCLI(t, "", "list", noName); r.Code != 1 || !strings.Contains(r.Stderr, "Missing required field in frontmatter: name") {
		t.Errorf("list without a name: exit %d, want 1; stderr:\n%s", r.Code, r.Stderr)
	}
}

// TestRunNestedScript: a script path with a slash is relative to the skill
// folder and runs from it (the older layout "ooxml/scripts/unpack.py");
// paths out of the folder are refused.
func TestRunNestedScript(t *testing.T) {
	skill := newSkill(t, map[string]string{
		"ooxml/scripts/unpack.py": "import os, sys\nprint('unpack', os.getcwd(), *sys.argv[1:])\n",
	})
	outside := filepath.Join(filepath.Dir(skill), "outside.sh")
	if err := os.WriteFile(outside, []byte("echo escaped\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "audit", "--allow-degraded", skill, "ooxml/scripts/unpack.py", "a.docx")
	rec := stderrRecord(t, r.Stderr)
	if rec.ErrorKind == audit.KindUnsupported {
		t.Skipf("no sandbox here: %s", rec.Error)
	}
	real, err := filepath.EvalSymlinks(skill)
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != 0 || strings.TrimSpace(r.Stdout) != "unpack "+real+" a.docx" {
		t.Fatalf("exit %d, stdout %q (want the skill folder as working directory); stderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if rec.Script != "ooxml/scripts/unpack.py" {
		t.Errorf("record script %q", rec.Script)
	}
	if r := runCLI(t, "", "run", "--allow-degraded", skill, "ok.sh"); r.Code != 0 {
		t.Errorf("a bare name: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	for _, script := range []string{"../outside.sh", "ooxml/../../outside.sh", outside, "ooxml/scripts", "ooxml/missing.py"} {
		r := runCLI(t, "", "audit", "--allow-degraded", skill, script)
		rec := stderrRecord(t, r.Stderr)
		if r.Code != exitRefused || rec.ErrorKind != audit.KindBadScript || strings.Contains(r.Stdout, "escaped") {
			t.Errorf("%q: exit %d, kind %q; want refused as a bad script; stderr:\n%s", script, r.Code, rec.ErrorKind, r.Stderr)
		}
	}
	// A symlink out of the skill makes it one run refuses, whatever runs.
	if err := os.Symlink(outside, filepath.Join(skill, "ooxml", "out.sh")); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, "", "run", "--allow-degraded", skill, "ooxml/out.sh"); r.Code != exitRefused || strings.Contains(r.Stdout, "escaped") {
		t.Errorf("symlink out: exit %d, stdout %q; want refused", r.Code, r.Stdout)
	}
}
