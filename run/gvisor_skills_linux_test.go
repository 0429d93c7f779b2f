package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// docxPDFScript converts the user's document to PDF with LibreOffice into
// the output folder, as Anthropic's docx and pptx skills do (their
// soffice.py: SAL_USE_VCLPLUGIN=svp, "soffice --headless --convert-to
// pdf"), then extracts the PDF's text with poppler to check it.
const docxPDFScript = `#!/usr/bin/env bash
set -euo pipefail
in=$1 out=$2
SAL_USE_VCLPLUGIN=svp "${SOFFICE:-soffice}" --headless --convert-to pdf --outdir "$out" "$in" >/dev/null 2>&1
pdf="$out/$(basename "${in%.*}").pdf"
pdftotext -layout "$pdf" "$out/text.txt"
pdfinfo "$pdf" | awk '/^Pages:/ { print "pages", $2 }'
`

// salesScript reads a CSV of the user's with pandas, summarises it with
// numpy and pandas, and writes CSV and JSON results into the output
// folder, in a subfolder it makes.
const salesScript = `import json, sys
from pathlib import Path
import numpy as np
import pandas as pd
df = pd.read_csv(sys.argv[1])
out = Path(sys.argv[2]) / "results"
out.mkdir(parents=True, exist_ok=True)
by = df.groupby("region")["amount"].agg(["count", "sum", "mean"]).round(2)
by.to_csv(out / "by_region.csv")
stats = {"total": int(df.amount.sum()), "median": float(np.median(df.amount)), "p90": float(np.percentile(df.amount, 90)),
         "regions": sorted(df.region.unique().tolist())}
(out / "stats.json").write_text(json.dumps(stats, sort_keys=True, indent=2))
print("rows", len(df), "total", stats["total"])
`

// realSkill is one case of TestGVisorRealSkills: its script, the tools
// and Python modules it needs, its arguments (IN, OUT as in
// collectionArgs) and environment, whether it runs in OUT, the files it
// must leave in OUT and a piece of its stdout; launcher marks a case
// that starts LibreOffice through Debian's soffice launcher.
type realSkill struct {
	name, script string
	tools        []string
	modules      string
	args         []string
	env          map[string]string
	inOut        bool
	launcher     bool
	want         []string
	stdout       string
}

// loProgram is LibreOffice's own start script, which Debian's
// /usr/bin/soffice links to.
const loProgram = "/usr/lib/libreoffice/program/soffice"

// TestGVisorRealSkills runs what real skills do, with the grants a user
// gives (--read the inputs, --write an output folder the user made, --cwd
// it for a script that writes relative paths), under the native and the
// gvisor backend, and requires the same stdout and the same files with
// the same contents (a PDF by its text: LibreOffice stamps each with its
// time): LibreOffice converting a .docx to PDF and HTML to text, pandas
// and numpy on a CSV, node's built-ins writing JSON. TestUnprivileged
// runs it as nobody too. A missing tool skips its case, except under
// CI=true, where .ci/run installs it.
func TestGVisorRealSkills(t *testing.T) {
	needRunsc(t)
	dir := newSkill(t, map[string]string{
		"docx_pdf.sh": docxPDFScript, "soffice.sh": sofficeScript, "sales.py": salesScript, "webhook.js": webhookScript,
	})
	in := collectionInputs(t)
	csv := "region,amount\nnorth,120\nsouth,80\nnorth,200\neast,45\nsouth,310\neast,99\n"
	for name, content := range map[string][]byte{"report.docx": reportDocx(t), "sales.csv": []byte(csv)} {
		if err := os.WriteFile(filepath.Join(in, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []realSkill{
		{name: "LibreOffice docx to PDF", script: "docx_pdf.sh", tools: []string{"soffice", "pdftotext", "pdfinfo"},
			args: []string{"IN/report.docx", "OUT"}, env: map[string]string{"SOFFICE": loProgram}, want: []string{"report.pdf", "text.txt"}, stdout: "pages 1"},
		{name: "LibreOffice docx to PDF by the launcher", script: "docx_pdf.sh", tools: []string{"soffice", "pdftotext", "pdfinfo"}, launcher: true,
			args: []string{"IN/report.docx", "OUT"}, want: []string{"report.pdf", "text.txt"}, stdout: "pages 1"},
		{name: "LibreOffice HTML to text in the working folder", script: "soffice.sh", tools: []string{"soffice"}, launcher: true,
			args: []string{"IN/notes.html"}, inOut: true, want: []string{"notes.txt"}, stdout: "Budget approved: 1,999 EUR."},
		{name: "pandas numpy CSV", script: "sales.py", tools: []string{"python3"}, modules: "numpy, pandas",
			args: []string{"IN/sales.csv", "OUT"}, want: []string{"results/by_region.csv", "results/stats.json"}, stdout: "rows 6 total 854"},
		{name: "node built-ins JSON", script: "webhook.js", tools: []string{"node"},
			args: []string{"IN/event.json", "OUT"}, want: []string{"verified/result.json"}, stdout: "verified order.paid"},
	}
	statxBug := gvisorRefusesNoAutomount(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.launcher && statxBug != "" {
				t.Skipf("this gVisor's kernel refuses AT_NO_AUTOMOUNT (%s), and Debian's soffice launcher resolves its own symlink with ls -l, which passes it: docs/backends.md", statxBug)
			}
			for _, tool := range c.tools {
				needOrCI(t, tool, func() error { _, err := lookPath(tool, sandboxPath); return err })
			}
			if c.modules != "" {
				needOrCI(t, "Python modules "+c.modules, func() error {
					return runBare(t.TempDir(), "python3", "-c", "import "+c.modules)
				})
			}
			var outs, stdouts [2]string
			for i, b := range []string{BackendNative, BackendGVisor} {
				out := gvisorOutFolder(t)
				sb := Sandbox{Backend: b, ReadPaths: []string{in}, WritePaths: []string{out}, Env: c.env, Timeout: 180 * time.Second}
				if c.inOut {
					sb.Cwd = out
				}
				start := time.Now()
				o := runIn(t, sb, dir, c.script, collectionArgs(c.args, in, out)...)
				if o.err != nil || o.res.ExitCode != 0 {
					t.Fatalf("%s: err %v exit %d stdout %q stderr %s", b, o.err, o.res.ExitCode, o.stdout, lastLine(o.stderr))
				}
				t.Logf("%s: %v", b, time.Since(start).Round(time.Millisecond))
				if !strings.Contains(o.stdout, c.stdout) {
					t.Errorf("%s: stdout %q, want %q in it", b, o.stdout, c.stdout)
				}
				for _, name := range c.want {
					if _, err := os.Stat(filepath.Join(out, name)); err != nil {
						t.Errorf("%s: %s: %v", b, name, err)
					}
				}
				outs[i], stdouts[i] = pdfNamesOnly(folderContents(t, out)), o.stdout
			}
			if outs[0] != outs[1] || stdouts[0] != stdouts[1] {
				t.Errorf("outputs differ:\nnative:\n%s%q\ngvisor:\n%s%q", outs[0], stdouts[0], outs[1], stdouts[1])
			}
		})
	}
}

// gvisorRefusesNoAutomount returns the error of `ls -ld /` under gVisor
// when its kernel refuses statx's AT_NO_AUTOMOUNT (runsc 20221219:
// EINVAL), which coreutils' ls passes, or "" when ls works there.
func gvisorRefusesNoAutomount(t *testing.T) string {
	t.Helper()
	skill := gvisorSkill(t, "ls -ld / >/dev/null\n")
	o := runIn(t, Sandbox{Backend: BackendGVisor}, skill, "scripts/k.sh")
	if o.err != nil {
		t.Fatalf("ls under gVisor: %v", o.err)
	}
	if o.res.ExitCode != 0 && strings.Contains(o.stderr, "Invalid argument") {
		return strings.TrimSpace(lastLine(o.stderr))
	}
	if o.res.ExitCode != 0 {
		t.Fatalf("ls under gVisor: exit %d, stderr %q", o.res.ExitCode, o.stderr)
	}
	return ""
}

// gvisorOutFolder is an output folder the user made for a run under
// either backend: a root caller's must be one the run's identity (uid
// 65534) owns and reaches by path (docs/backends.md, "A root caller's
// grants under gVisor"); any other caller's is its own, as callerFolder
// makes it.
func gvisorOutFolder(t *testing.T) string {
	t.Helper()
	out := callerFolder(t)
	if os.Geteuid() == 0 {
		os.Chmod(filepath.Dir(out), 0o755)
		if err := os.Chown(out, nobodyUID, nobodyUID); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// pdfNamesOnly drops the size and hash of the PDFs in a folderContents
// listing: LibreOffice writes the time of the conversion into each.
func pdfNamesOnly(listing string) string {
	lines := strings.Split(listing, "\n")
	for i, l := range lines {
		if name, _, ok := strings.Cut(l, " "); ok && strings.HasSuffix(name, ".pdf") {
			lines[i] = name
		}
	}
	return strings.Join(lines, "\n")
}

// reportDocx is a small Word document LibreOffice opens: two paragraphs.
func reportDocx(t *testing.T) []byte {
	t.Helper()
	const head = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"
	files := [][2]string{
		{"[Content_Types].xml", head + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
			`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
			`<Default Extension="xml" ContentType="application/xml"/>` +
			`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{"_rels/.rels", head + `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
			`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
		{"word/document.xml", head + `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			`<w:p><w:r><w:t>Quarterly minutes</w:t></w:r></w:p><w:p><w:r><w:t>Budget approved: 1,999 EUR.</w:t></w:r></w:p></w:body></w:document>`},
	}
	return zipBytes(t, files)
}
