package run

import (
	"archive/zip"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/minipdf"
)

// The scripts below follow what public skill collections' scripts do
// (docs/skills.md, "Scripts of public collections"), written for these
// tests: scientific Python writing tables and plots into the output
// folder it is given, making subfolders first; node reading an input and
// writing JSON; bash running ffmpeg and poppler on the user's files.

// cohortScript makes a seeded data set with numpy, summarises it with
// pandas and tests it with scipy, and writes CSV and LaTeX tables into
// OUT/tables, made first (K-Dense's create_cohort_tables.py -o DIR).
const cohortScript = `import sys
from pathlib import Path
import numpy as np
import pandas as pd
from scipy import stats
out = Path(sys.argv[1]) / "tables"
out.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(7)
df = pd.DataFrame({"group": rng.choice(["A", "B"], 200), "age": rng.normal(60, 9, 200).round(1)})
summary = df.groupby("group")["age"].agg(["count", "mean", "std"]).round(3)
summary.to_csv(out / "summary.csv")
t, p = stats.ttest_ind(df[df.group == "A"].age, df[df.group == "B"].age)
(out / "summary.tex").write_text(summary.to_latex() if hasattr(summary, "to_latex") else str(summary))
print("t=%.4f p=%.4f" % (t, p))
`

// plotScript draws with matplotlib's default backend (none is chosen, as
// in K-Dense's plot_template.py) and saves a PNG to the path it is given,
// plot.png in the working folder by default.
const plotScript = `import sys
import numpy as np
import matplotlib.pyplot as plt
x = np.linspace(0, 2 * np.pi, 50)
fig, ax = plt.subplots(figsize=(3, 2), dpi=50)
ax.plot(x, np.sin(x))
ax.set_title("sin")
out = sys.argv[1] if len(sys.argv) > 1 else "plot.png"
fig.savefig(out)
print("saved", out)
`

// webhookScript checks an HMAC over an input JSON file with node's
// crypto and writes the verdict as JSON (claudekit's webhook verifiers).
const webhookScript = `#!/usr/bin/env node
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const [input, outDir] = process.argv.slice(2);
const event = JSON.parse(fs.readFileSync(input, 'utf8'));
const mac = crypto.createHmac('sha256', 'test-secret').update(JSON.stringify(event.data)).digest('hex');
const result = { type: event.type, valid: mac === event.signature, mac };
fs.mkdirSync(path.join(outDir, 'verified'), { recursive: true });
fs.writeFileSync(path.join(outDir, 'verified', 'result.json'), JSON.stringify(result, null, 2));
console.log(result.valid ? 'verified' : 'rejected', result.type);
`

// frameScript takes a frame of a video with ffmpeg into a folder it makes
// (openclaw's video-frames frame.sh), and probes the video.
const frameScript = `#!/usr/bin/env bash
set -euo pipefail
in=$1 out=$2
mkdir -p "$(dirname "$out")"
ffmpeg -hide_banner -loglevel error -y -i "$in" -vf "select=eq(n\,0)" -frames:v 1 "$out"
ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0 "$in"
[[ -f "$out" ]] && echo "$out"
`

// pdfScript extracts the text of a PDF and renders its first page with
// poppler, and prints its page count and first line (K-Dense's review_poster.sh runs
// pdfinfo and pdffonts the same way).
const pdfScript = `#!/usr/bin/env bash
set -euo pipefail
in=$1 out=$2
pdftotext -layout "$in" "$out/text.txt"
pdftoppm -png -r 20 -f 1 -l 1 "$in" "$out/page"
pdfinfo "$in" | awk '/^Pages:/ { print "pages", $2 }'
head -n 1 "$out/text.txt"
`

// collectionPattern is one pattern of TestPublicCollectionPatterns: the
// programs it needs (tools on the sandbox PATH; Python modules through
// python3), its script and arguments (IN and OUT stand for the input
// folder and the output folder), whether it runs in OUT, the files it
// must leave in OUT and a piece of its stdout.
// ooxmlScript edits, as Anthropic's docx and pptx scripts do (comment.py,
// add_slide.py, clean.py, pack.py), a document the user unpacked earlier
// into the write grant: rewrites one of the user's files in place, copies
// a template of the skill's beside it, deletes one, and packs the folder
// again (fixed member times, for a byte-for-byte comparison).
const ooxmlScript = `import shutil, sys, zipfile
from pathlib import Path
out = Path(sys.argv[1])
u = out / "unpacked"
doc = u / "word" / "document.xml"
doc.write_text(doc.read_text().replace("</w:body>", "<w:p><w:r><w:t>added</w:t></w:r></w:p></w:body>"))
shutil.copy(Path(__file__).parent / "comments.xml", u / "word" / "comments.xml")
(u / "word" / "old.xml").unlink()
with zipfile.ZipFile(out / "output.docx", "w", zipfile.ZIP_DEFLATED) as z:
    for f in sorted(p for p in u.rglob("*") if p.is_file()):
        z.writestr(zipfile.ZipInfo(f.relative_to(u).as_posix(), (2026, 1, 1, 0, 0, 0)), f.read_bytes())
    print("packed", len(z.namelist()))
`

// sofficeScript converts a document of the user's into the working
// folder with LibreOffice, as the skills' soffice.py wrapper does
// ("python scripts/office/soffice.py --headless --convert-to pdf doc.docx");
// plain text, for a byte-for-byte comparison.
const sofficeScript = `#!/usr/bin/env bash
set -euo pipefail
soffice --headless --convert-to txt:Text "$1" >/dev/null 2>&1
tail -n 1 notes.txt
`

type collectionPattern struct {
	name, script string
	tools        []string
	modules      string
	args         []string
	inOut        bool
	unpack       string // a zip of IN the user unpacks into OUT/unpacked first
	want         []string
	stdout       string
}

// collectionPatterns are the patterns of TestPublicCollectionPatterns.
func collectionPatterns() []collectionPattern {
	return []collectionPattern{
		{name: "numpy pandas scipy tables", script: "cohort.py", tools: []string{"python3"}, modules: "numpy, pandas, scipy",
			args: []string{"OUT"}, want: []string{"tables/summary.csv", "tables/summary.tex"}, stdout: "t="},
		{name: "matplotlib PNG by path", script: "plot.py", tools: []string{"python3"}, modules: "numpy, matplotlib",
			args: []string{"OUT/fig.png"}, want: []string{"fig.png"}, stdout: "saved"},
		{name: "matplotlib PNG in the working folder", script: "plot.py", tools: []string{"python3"}, modules: "numpy, matplotlib",
			inOut: true, want: []string{"plot.png"}, stdout: "saved plot.png"},
		{name: "node webhook JSON", script: "webhook.js", tools: []string{"node"},
			args: []string{"IN/event.json", "OUT"}, want: []string{"verified/result.json"}, stdout: "verified order.paid"},
		{name: "bash ffmpeg frame", script: "frame.sh", tools: []string{"ffmpeg", "ffprobe"},
			args: []string{"IN/clip.mp4", "OUT/frames/first.png"}, want: []string{"frames/first.png"}, stdout: "160,120"},
		{name: "bash poppler text and page", script: "pdf.sh", tools: []string{"pdftotext", "pdftoppm", "pdfinfo"},
			args: []string{"IN/doc.pdf", "OUT"}, want: []string{"text.txt", "page-1.png"}, stdout: "pages 1\nQuarterly report 2026"},
		{name: "python OOXML edit in place", script: "ooxml.py", tools: []string{"python3"}, unpack: "doc.docx",
			args: []string{"OUT"}, want: []string{"output.docx", "unpacked/word/comments.xml"}, stdout: "packed 3"},
		{name: "LibreOffice conversion into the working folder", script: "soffice.sh", tools: []string{"soffice"},
			args: []string{"IN/notes.html"}, inOut: true, want: []string{"notes.txt"}, stdout: "Budget approved: 1,999 EUR."},
	}
}

// TestPublicCollectionPatterns runs, bare and then sandboxed with the
// grants a user gives (--read the inputs, --write an output folder the
// user made, --cwd it where the script writes relative paths), scripts
// doing what public collections' scripts do, on inputs made here: the
// outputs must be the same files with the same contents, and belong to
// the caller. TestUnprivileged runs it as nobody too. A missing tool
// skips its case, except under CI=true, where .ci/run installs it.
func TestPublicCollectionPatterns(t *testing.T) {
	dir := newSkill(t, map[string]string{
		"cohort.py": cohortScript, "plot.py": plotScript, "webhook.js": webhookScript,
		"frame.sh": frameScript, "pdf.sh": pdfScript, "ooxml.py": ooxmlScript,
		"comments.xml": "<w:comments/>\n", "soffice.sh": sofficeScript,
	})
	in := collectionInputs(t)
	for _, p := range collectionPatterns() {
		t.Run(p.name, func(t *testing.T) {
			for _, tool := range p.tools {
				needOrCI(t, tool, func() error { _, err := lookPath(tool, sandboxPath); return err })
			}
			if p.modules != "" {
				needOrCI(t, "Python modules "+p.modules, func() error {
					return runBare(t.TempDir(), "python3", "-c", "import "+p.modules)
				})
			}
			if p.name == "bash ffmpeg frame" {
				makeClip(t, in)
			}
			bare := callerFolder(t)
			unpackInto(t, p.unpack, in, bare)
			args := collectionArgs(p.args, in, bare)
			// As SKILL.md files say: "python scripts/x.py", "node ...".
			interp := map[string]string{".py": "python3", ".js": "node", ".sh": "bash"}[filepath.Ext(p.script)]
			needOrCI(t, "a bare run", func() error {
				return runBareHome(t.TempDir(), collectionCwd(p.inOut, bare, dir), interp, append([]string{filepath.Join(dir, "scripts", p.script)}, args...)...)
			})
			out := callerFolder(t)
			unpackInto(t, p.unpack, in, out)
			sb := Sandbox{ReadPaths: []string{in}, WritePaths: []string{out}, Timeout: 120 * time.Second}
			if p.inOut {
				sb.Cwd = out
			}
			o := runIn(t, sb, dir, p.script, collectionArgs(p.args, in, out)...)
			if o.err != nil || o.res.ExitCode != 0 {
				t.Fatalf("err %v exit %d stdout %q stderr %s", o.err, o.res.ExitCode, o.stdout, lastLine(o.stderr))
			}
			if !strings.Contains(o.stdout, p.stdout) {
				t.Errorf("stdout %q, want %q in it", o.stdout, p.stdout)
			}
			for _, name := range p.want {
				if _, err := os.Stat(filepath.Join(out, name)); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			if got, want := folderContents(t, out), folderContents(t, bare); got != want {
				t.Errorf("outputs differ from the bare run's:\nsandboxed:\n%s\nbare:\n%s", got, want)
			}
			checkOwnedByCaller(t, out)
		})
	}
}

// needOrCI skips t when check fails (a tool is missing), or fails it
// under CI=true, where .ci/run must have installed what.
func needOrCI(t *testing.T, what string, check func() error) {
	t.Helper()
	if err := check(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s missing under CI=true (.ci/run installs it): %v", what, err)
		}
		t.Skipf("%s missing: %v", what, err)
	}
}

// runBare runs prog with args in dir, out of any sandbox, with the
// sandbox's PATH, and returns its error with its output.
func runBare(dir, prog string, args ...string) error {
	return runBareHome("", dir, prog, args...)
}

// runBareHome is runBare with HOME set to home unless it is "": a user's
// home is writable (LibreOffice keeps its profile there), that of
// TestUnprivileged's nobody is not.
func runBareHome(home, dir, prog string, args ...string) error {
	if filepath.Base(prog) == prog {
		p, err := lookPath(prog, sandboxPath)
		if err != nil {
			return err
		}
		prog = p
	}
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+sandboxPath)
	if home != "" {
		cmd.Env = append(cmd.Env, "HOME="+home)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", filepath.Base(prog), err, lastLine(string(out)))
	}
	return nil
}

// collectionCwd is where a pattern runs bare: the output folder for one
// that writes relative paths, else the skill folder (SKILL.md files say
// "python scripts/x.py").
func collectionCwd(inOut bool, out, skill string) string {
	if inOut {
		return out
	}
	return skill
}

// collectionArgs puts the input and output folders into args.
func collectionArgs(args []string, in, out string) []string {
	r := strings.NewReplacer("IN", in, "OUT", out)
	res := make([]string, len(args))
	for i, a := range args {
		res[i] = r.Replace(a)
	}
	return res
}

// collectionInputs makes the folder of the user's input files, readable
// by the sandbox's identity: an event for the node script and a one-page
// PDF (the video is made by makeClip, with ffmpeg).
func collectionInputs(t *testing.T) string {
	t.Helper()
	in, err := os.MkdirTemp("", "skill-sandbox-inputs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(in) })
	os.Chmod(in, 0o755)
	// Signed with the script's rule (HMAC-SHA256 of the data with
	// "test-secret"): "verified" shows node's crypto at work.
	data := `{"id":42,"amount":1999}`
	mac := hmac.New(sha256.New, []byte("test-secret"))
	mac.Write([]byte(data))
	event := fmt.Sprintf(`{"type":"order.paid","data":%s,"signature":"%x"}`, data, mac.Sum(nil))
	pdf, err := minipdf.OnePage([]string{"Quarterly report 2026"})
	if err != nil {
		t.Fatal(err)
	}
	notes := "<html><body><h1>Minutes</h1><p>Budget approved: 1,999 EUR.</p></body></html>\n"
	for name, content := range map[string][]byte{"event.json": []byte(event), "doc.pdf": pdf, "doc.docx": docxBytes(t), "notes.html": []byte(notes)} {
		if err := os.WriteFile(filepath.Join(in, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// docxBytes is a minimal OOXML package: what the OOXML pattern edits.
func docxBytes(t *testing.T) []byte {
	return zipBytes(t, [][2]string{
		{"[Content_Types].xml", "<Types/>\n"},
		{"word/document.xml", "<w:document><w:body><w:p><w:r><w:t>Hello</w:t></w:r></w:p></w:body></w:document>\n"},
		{"word/old.xml", "<old/>\n"},
	})
}

// zipBytes is a zip archive of files (name, contents), in order.
func zipBytes(t *testing.T, files [][2]string) []byte {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, f := range files {
		w, err := z.Create(f[0])
		if err == nil {
			_, err = w.Write([]byte(f[1]))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// unpackInto extracts IN/name into OUT/unpacked as the caller, the files
// of the user's own that a pattern then edits; nothing when name is "".
func unpackInto(t *testing.T, name, in, out string) {
	t.Helper()
	if name == "" {
		return
	}
	z, err := zip.OpenReader(filepath.Join(in, name))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, f := range z.File {
		dst := filepath.Join(out, "unpacked", filepath.FromSlash(f.Name))
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err == nil {
			err = os.MkdirAll(filepath.Dir(dst), 0o755)
		}
		if err == nil {
			err = os.WriteFile(dst, data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// makeClip makes IN/clip.mp4, two seconds of ffmpeg's test pattern.
func makeClip(t *testing.T, in string) {
	t.Helper()
	clip := filepath.Join(in, "clip.mp4")
	if _, err := os.Stat(clip); err == nil {
		return
	}
	if err := runBare(in, "ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-t", "2", "-pix_fmt", "yuv420p", clip); err != nil {
		t.Fatalf("making the input video: %v", err)
	}
	os.Chmod(clip, 0o644)
}

// folderContents lists the entries under root with each file's contents,
// for comparing two runs' outputs.
func folderContents(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			fmt.Fprintf(&b, "%s/\n", rel)
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
		}
		fmt.Fprintf(&b, "%s %d bytes sha256 %x\n", rel, len(data), sha256.Sum256(data))
		return nil
	})
	return b.String()
}
