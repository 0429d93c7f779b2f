// Package skillcorpus writes a corpus of generated skills shaped like
// published ones, for the bulk benchmarks of validate and scan and for
// scripts/bulkbench: a SKILL.md of 2-8 KB with the usual frontmatter
// (folded description, license, allowed-tools, metadata) and a Markdown
// body of sections, lists, code blocks and links, and 1-3 scripts of a few
// KB (Python, Bash, JavaScript) under scripts/, some naming an HTTPS
// endpoint. No public skill is copied: the text is generated from a fixed
// seed, so every corpus of a given size is the same, byte for byte.
package skillcorpus

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Write creates n skill folders under root (which must exist) and returns
// their paths in lexical order. Every tenth skill has a name that breaks
// the naming rule, so validate finds n/10 invalid skills.
func Write(root string, n int) ([]string, error) {
	rng := rand.New(rand.NewPCG(32, uint64(n)))
	dirs := make([]string, n)
	for i := range dirs {
		name := fmt.Sprintf("skill-%05d", i)
		dir := filepath.Join(root, name)
		dirs[i] = dir
		if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
			return nil, err
		}
		mdName := name
		if i%10 == 9 {
			mdName = "Bad_Name"
		}
		scripts := make([]string, 1+rng.IntN(3))
		for j := range scripts {
			scripts[j] = fmt.Sprintf("%s%d%s", scriptStems[rng.IntN(len(scriptStems))], j, scriptExts[j%len(scriptExts)])
		}
		md := skillMD(rng, mdName, i, scripts)
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
			return nil, err
		}
		for j, s := range scripts {
			body := script(rng, j%len(scriptExts), i)
			if err := os.WriteFile(filepath.Join(dir, "scripts", s), []byte(body), 0o755); err != nil {
				return nil, err
			}
		}
	}
	return dirs, nil
}

var (
	scriptStems = []string{"extract", "convert", "report", "fetch_data", "check", "summarize"}
	scriptExts  = []string{".py", ".sh", ".js"}
	words       = strings.Fields(`the a document table report field value file page section
		summary input output format column row chart sheet record entry list item text
		image header footer note comment reference source target data result check
		extract convert merge split validate render export import parse update read write
		when each every before after with without from into only also then always never`)
)

// sentence returns a sentence of 8-20 generated words.
func sentence(rng *rand.Rand) string {
	n := 8 + rng.IntN(13)
	var b strings.Builder
	for k := range n {
		w := words[rng.IntN(len(words))]
		if k == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	b.WriteString(".")
	return b.String()
}

// skillMD returns a SKILL.md of 2-8 KB for the skill name.
func skillMD(rng *rand.Rand, name string, i int, scripts []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\ndescription: >-\n", name)
	for range 2 + rng.IntN(2) {
		fmt.Fprintf(&b, "  %s\n", sentence(rng))
	}
	fmt.Fprintf(&b, "  Use when the user asks about report %d.\nlicense: Apache-2.0\n", i)
	b.WriteString("allowed-tools: Read Write Bash(python3:*) Bash(bash:*)\n")
	fmt.Fprintf(&b, "metadata:\n  author: bench\n  version: \"1.%d\"\n  category: documents\n---\n\n", i%9)
	fmt.Fprintf(&b, "# Skill %d\n\n%s %s\n\n", i, sentence(rng), sentence(rng))
	target := 2048 + rng.IntN(6*1024)
	for sec := 0; b.Len() < target; sec++ {
		fmt.Fprintf(&b, "## Step %d\n\n", sec+1)
		for range 2 + rng.IntN(3) {
			b.WriteString(sentence(rng))
			b.WriteByte(' ')
		}
		b.WriteString("\n\n")
		s := scripts[sec%len(scripts)]
		fmt.Fprintf(&b, "Run [the %s script](scripts/%s) on the input:\n\n```bash\n", strings.TrimSuffix(s, filepath.Ext(s)), s)
		fmt.Fprintf(&b, "python3 scripts/%s --input input.pdf --output out-%d.json\n```\n\n", s, sec)
		for k := range 3 + rng.IntN(4) {
			fmt.Fprintf(&b, "- **Item %d**: %s\n", k+1, sentence(rng))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// script returns a script of 1-5 KB in the language of kind (0 Python,
// 1 Bash, 2 JavaScript).
func script(rng *rand.Rand, kind, i int) string {
	var b strings.Builder
	target := 1024 + rng.IntN(4*1024)
	switch kind {
	case 0:
		b.WriteString("#!/usr/bin/env python3\n\"\"\"Generated benchmark script.\"\"\"\nimport argparse\nimport json\nimport os\nimport sys\n\n")
		for f := 0; b.Len() < target; f++ {
			fmt.Fprintf(&b, "\ndef step_%d(rows, limit=%d):\n    \"\"\"%s\"\"\"\n    out = []\n    for row in rows:\n        if len(row) > limit:\n            out.append({\"id\": row[0], \"value\": row[1:limit]})\n        else:\n            out.append({\"id\": row[0], \"value\": row})\n    return out\n\n", f, 10+f, sentence(rng))
			if f == 1 && i%3 == 0 {
				b.WriteString("API_URL = \"https://api.example.com/v1/reports\"\n\n")
			}
		}
		b.WriteString("\ndef main():\n    p = argparse.ArgumentParser()\n    p.add_argument('--input')\n    p.add_argument('--output')\n    a = p.parse_args()\n    with open(a.input) as f:\n        rows = [l.split(',') for l in f]\n    json.dump(step_0(rows), open(a.output, 'w'))\n\n\nif __name__ == '__main__':\n    main()\n")
	case 1:
		b.WriteString("#!/usr/bin/env bash\n# Generated benchmark script.\nset -euo pipefail\n\n")
		for f := 0; b.Len() < target; f++ {
			fmt.Fprintf(&b, "step_%d() {\n  # %s\n  local in=\"$1\" out=\"$2\"\n  if [ ! -f \"$in\" ]; then\n    echo \"missing $in\" >&2\n    return 1\n  fi\n  grep -v '^#' \"$in\" | sort | uniq -c > \"$out\"\n}\n\n", f, sentence(rng))
		}
		b.WriteString("step_0 \"${1:-input.txt}\" \"${2:-out.txt}\"\n")
	default:
		b.WriteString("#!/usr/bin/env node\n// Generated benchmark script.\n'use strict';\nconst fs = require('fs');\nconst path = require('path');\n\n")
		for f := 0; b.Len() < target; f++ {
			fmt.Fprintf(&b, "// %s\nfunction step%d(rows) {\n  return rows.filter((r) => r.length > %d).map((r) => ({ id: r[0], value: r.slice(1) }));\n}\n\n", sentence(rng), f, f)
			if f == 1 && i%4 == 0 {
				b.WriteString("const endpoint = 'https://data.example.org/export';\n\n")
			}
		}
		b.WriteString("const rows = fs.readFileSync(process.argv[2], 'utf8').split('\\n').map((l) => l.split(','));\nfs.writeFileSync(path.resolve(process.argv[3]), JSON.stringify(step0(rows)));\n")
	}
	return b.String()
}
