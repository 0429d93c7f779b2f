package prepare

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/minipdf"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// debianSkill is a skill modelled on Anthropic's pdf skill
// (check_fillable_fields.py) and on the ooxml unpack.py of its docx and
// pptx skills as collections publish them, whose SKILL.md says "pip
// install pypdf defusedxml": docs/dependencies.md lists the real ones
// prepared and run this way.
var debianSkill = map[string]string{
	"SKILL.md": "---\nname: doc-tools\ndescription: Check PDF forms and unpack Office files. Use for PDF and docx work.\n---\n\n" +
		"Requires: `pip install pypdf defusedxml`\n",
	RequirementsFile: "pypdf\ndefusedxml\n",
	"scripts/check_fillable_fields.py": `import json, sys
import pypdf
from pypdf import PdfReader

fields = PdfReader(sys.argv[1]).get_fields() or {}
if fields:
    print("This PDF has fillable form fields")
else:
    print("This PDF does not have fillable form fields")
print(json.dumps(sorted(fields)))
print("pypdf from", pypdf.__file__)
`,
	"scripts/unpack.py": `import pathlib, sys, zipfile
import defusedxml.minidom

out = pathlib.Path(sys.argv[2])
zipfile.ZipFile(sys.argv[1]).extractall(out)
n = 0
for f in sorted(out.rglob("*.xml")) + sorted(out.rglob("*.rels")):
    f.write_bytes(defusedxml.minidom.parse(str(f)).toprettyxml(indent="  ", encoding="ascii"))
    n += 1
print("unpacked", n, "XML files")
print("defusedxml from", defusedxml.__file__)
`,
}

// TestDebianWheelsSkill: wheels assembled at test time from the pypdf
// and defusedxml Debian installed (testdata/debwheel.py) are served on a
// loopback index; a skill whose SKILL.md asks for them is prepared and
// its scripts run on a PDF form and a docx made here, importing the
// packages from the environment (their __file__ is in it), not from
// Debian's dist-packages, which the environment's python does not see.
func TestDebianWheelsSkill(t *testing.T) {
	py := needBuild(t)
	if out, err := exec.Command("/usr/bin/python3", "-c", "import pypdf, defusedxml").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" { // .ci/run installs them
			t.Fatalf("Debian's python3-pypdf and python3-defusedxml: %v %s", err, out)
		}
		t.Skipf("Debian's python3-pypdf and python3-defusedxml are not installed: %v %s", err, out)
	}
	wheels := t.TempDir()
	out, err := exec.Command("/usr/bin/python3", "testdata/debwheel.py", wheels, "pypdf", "defusedxml").Output()
	if err != nil {
		t.Fatalf("debwheel.py: %v", err)
	}
	ix := newTestIndex(t)
	for _, file := range strings.Fields(string(out)) {
		data, err := os.ReadFile(filepath.Join(wheels, file))
		if err != nil {
			t.Fatal(err)
		}
		ix.add(strings.ToLower(strings.SplitN(file, "-", 2)[0]), file, data)
	}
	skill := filepath.Join(t.TempDir(), "doc-tools")
	for name, body := range debianSkill {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(skill, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(skill, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deps, err := Load(skill)
	if err != nil {
		t.Fatal(err)
	}
	c := Cache{Dir: filepath.Join(t.TempDir(), "envs")}
	var log strings.Builder
	env, _, err := c.Build(context.Background(), deps, py, BuildOptions{Index: ix.URL + "/simple", Sandbox: run.Sandbox{Stdout: &log, Stderr: &log}})
	if err != nil {
		t.Fatalf("Build: %v\n%s", err, log.String())
	}
	if len(env.Installed) != 2 || ix.downloads != 2 {
		t.Errorf("installed %+v, %d downloads", env.Installed, ix.downloads)
	}

	work := t.TempDir()
	noForm, err := minipdf.OnePage([]string{"no fields here"})
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]byte{"form.pdf": formPDF(), "plain.pdf": noForm, "in.docx": testDocx(t, ""),
		"bomb.docx": testDocx(t, `<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>`)}
	for name, data := range inputs {
		if err := os.WriteFile(filepath.Join(work, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outDir := filepath.Join(work, "out")
	if err := os.Mkdir(outDir, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		script string
		args   []string
		exit   int
		want   []string
	}{
		{"check_fillable_fields.py", []string{filepath.Join(work, "form.pdf")}, 0, []string{"This PDF has fillable form fields\n[\"applicant\"]\n", "pypdf from " + env.Dir}},
		{"check_fillable_fields.py", []string{filepath.Join(work, "plain.pdf")}, 0, []string{"does not have fillable form fields\n[]\n"}},
		{"unpack.py", []string{filepath.Join(work, "in.docx"), filepath.Join(outDir, "in")}, 0, []string{"unpacked 3 XML files", "defusedxml from " + env.Dir}},
		// defusedxml itself, not a stand-in: a DTD entity is refused.
		{"unpack.py", []string{filepath.Join(work, "bomb.docx"), filepath.Join(outDir, "bomb")}, 1, []string{"EntitiesForbidden"}},
	} {
		var so, se strings.Builder
		sb := run.Sandbox{SkillDir: skill, Interpreters: []string{env.Python()}, ReadPaths: []string{work}, WritePaths: []string{outDir}, Stdout: &so, Stderr: &se}
		res, err := sb.Run(context.Background(), tt.script, tt.args)
		if err != nil || res.ExitCode != tt.exit {
			t.Errorf("%s %s: %v %+v\n%s%s", tt.script, filepath.Base(tt.args[0]), err, res, so.String(), se.String())
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(so.String()+se.String(), w) {
				t.Errorf("%s %s: output lacks %q:\n%s%s", tt.script, filepath.Base(tt.args[0]), w, so.String(), se.String())
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(outDir, "in", "word", "document.xml")); err != nil || !bytes.Contains(b, []byte("\n  <w:body>")) {
		t.Errorf("unpacked document.xml not pretty-printed: %v\n%s", err, b)
	}
	// The environment's python sees none of Debian's other packages:
	// the host's python3 has them, the environment's has not.
	for _, mod := range []string{"requests", "numpy", "docx", "openpyxl", "reportlab"} {
		if exec.Command("/usr/bin/python3", "-c", "import "+mod).Run() != nil {
			continue
		}
		var se strings.Builder
		sb := run.Sandbox{SkillDir: skill, Interpreters: []string{env.Python()}, Stderr: &se}
		res, err := sb.Command(context.Background(), []string{"python3", "-c", "import " + mod})
		if err != nil || res.ExitCode == 0 || !strings.Contains(se.String(), "No module named '"+mod+"'") {
			t.Errorf("import %s with the environment's python: %v %+v %s", mod, err, res, se.String())
		}
	}
}

// formPDF returns a one-page PDF with an AcroForm text field named
// "applicant".
func formPDF() []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R] >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Annots [4 0 R] >>",
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (applicant) /Rect [120 700 320 720] /P 3 0 R >>",
	}
	return minipdf.Objects(objs)
}

// testDocx returns a minimal docx (three XML parts) whose document.xml
// starts with doctype, after its XML declaration.
func testDocx(t *testing.T, doctype string) []byte {
	t.Helper()
	return zipOf(t, []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
		{"word/document.xml", `<?xml version="1.0"?>` + doctype + `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>Hello</w:t></w:r></w:p></w:body></w:document>`},
	})
}
