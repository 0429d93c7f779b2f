package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/skillcorpus"
)

// corpusSize is the number of skills BenchmarkValidateCorpus validates per
// iteration.
const corpusSize = 10000

// writeCorpus creates n skill folders shaped like real ones (folded
// description, metadata map, two scripts, a reference; every tenth skill has
// a broken name) under root and returns their paths.
func writeCorpus(tb testing.TB, root string, n int) []string {
	tb.Helper()
	dirs := make([]string, n)
	for i := range dirs {
		name := fmt.Sprintf("skill-%05d", i)
		dir := filepath.Join(root, name)
		dirs[i] = dir
		for _, d := range []string{"scripts", "references"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				tb.Fatal(err)
			}
		}
		mdName := name
		if i%10 == 9 {
			mdName = "Bad_Name"
		}
		md := fmt.Sprintf(`---
name: %s
description: >-
  Generated skill number %d for the validation benchmark. It extracts data
  from documents and writes a summary. Use when the user asks for a summary
  of document %d or mentions the benchmark corpus.
license: MIT
allowed-tools: Read Bash(python3:*)
metadata:
  author: bench
  version: "1.%d"
---

# Skill %d

Run `+"`scripts/main.py`"+` and read [the guide](references/guide.md).
`, mdName, i, i, i%7, i)
		files := map[string]string{
			"SKILL.md":            md,
			"scripts/main.py":     "#!/usr/bin/env python3\nprint('ok')\n",
			"scripts/helper.sh":   "#!/usr/bin/env bash\necho ok\n",
			"references/guide.md": "# Guide\n",
		}
		for rel, content := range files {
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(content), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return dirs
}

// BenchmarkValidateCorpus validates 10,000 generated skills with Skills per
// iteration and reports skills/s. Target: the whole corpus in under 2 s on
// 2 cores (over 5,000 skills/s).
func BenchmarkValidateCorpus(b *testing.B) {
	dirs := writeCorpus(b, b.TempDir(), corpusSize)
	b.ResetTimer()
	invalid := 0
	for i := 0; i < b.N; i++ {
		invalid = 0
		for _, r := range Skills(dirs, Options{}) {
			if !r.Valid {
				invalid++
			}
		}
	}
	b.StopTimer()
	if want := corpusSize / 10; invalid != want {
		b.Fatalf("%d invalid skills, want %d", invalid, want)
	}
	b.ReportMetric(float64(corpusSize*b.N)/b.Elapsed().Seconds(), "skills/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(corpusSize*b.N), "ns/skill")
}

// BenchmarkParseFrontmatter measures the parser alone on the example skill.
func BenchmarkParseFrontmatter(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "example", "word-stats", "SKILL.md"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := ParseFrontmatter(data); err != nil {
			b.Fatal(err)
		}
	}
}

// realisticSize is the number of skills BenchmarkValidateRealistic
// validates per iteration.
const realisticSize = 2000

// BenchmarkValidateRealistic validates 2,000 skills shaped like published
// ones (internal/skillcorpus: 2-8 KB SKILL.md, 1-3 scripts) with Find and
// Each, as validate --recursive does, and reports skills/s. Target (issue 32):
// over 30,000 skills/s on 2 cores.
func BenchmarkValidateRealistic(b *testing.B) {
	root := b.TempDir()
	if _, err := skillcorpus.Write(root, realisticSize); err != nil {
		b.Fatal(err)
	}
	invalid := 0
	for b.Loop() {
		invalid = 0
		dirs, err := Find(root)
		if err != nil {
			b.Fatal(err)
		}
		if err := Each(dirs, Options{}, func(r Result) error {
			if !r.Valid {
				invalid++
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	if want := realisticSize / 10; invalid != want {
		b.Fatalf("%d invalid skills, want %d", invalid, want)
	}
	b.ReportMetric(float64(realisticSize*b.N)/b.Elapsed().Seconds(), "skills/s")
}
