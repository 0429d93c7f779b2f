package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// measureCorpora times validate and scan over a generated corpus and
// reports whether both succeeded.
func measureCorpora(o options, base string, stderr io.Writer) ([]corpusRun, bool) {
	fmt.Fprintf(stderr, "bench: validate and scan a corpus of %d skills...\n", o.corpus)
	var valDur, scanDur time.Duration
	corpus, valErr := makeCorpus(o, base)
	scanErr := valErr
	if valErr == nil {
		valDur, valErr = measureCorpus(o, corpus, "validate")
		scanDur, scanErr = measureCorpus(o, corpus, "scan")
	}
	ok := true
	if valErr != nil || scanErr != nil {
		ok = false
		fmt.Fprintf(stderr, "bench: validate: %v; scan: %v\n", valErr, scanErr)
	}
	return []corpusRun{{"validate", valDur, valErr}, {"scan", scanDur, scanErr}}, ok
}

// makeCorpus generates the corpus of o.corpus skills under base.
func makeCorpus(o options, base string) (string, error) {
	dir := filepath.Join(base, "corpus")
	for i := 0; i < o.corpus; i++ {
		name := fmt.Sprintf("corpus-skill-%05d", i)
		sd := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(sd, "scripts"), 0o755); err != nil {
			return "", err
		}
		md := fmt.Sprintf("---\nname: %s\ndescription: >-\n  Generated benchmark skill %d. Formats reports and\n  checks their tables. Use when asked for report %d.\nlicense: MIT\nmetadata:\n  author: bench\n  version: \"1.%d\"\n---\n# Skill %d\n\nRun `scripts/run.py` on the input.\n", name, i, i, i%10, i)
		if err := os.WriteFile(filepath.Join(sd, "SKILL.md"), []byte(md), 0o644); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(sd, "scripts", "run.py"), []byte("print('ok')\n"), 0o755); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// measureCorpus times "skill-sandbox CMD --recursive CORPUS" three times
// and returns the median. scan exits 1 when it finds something at or above
// high; the generated skills have nothing, so any failure is an error.
func measureCorpus(o options, dir, command string) (time.Duration, error) {
	var times []time.Duration
	for i := 0; i < 3; i++ {
		cmd := exec.Command(o.bin, command, "--recursive", dir)
		var errBuf strings.Builder
		cmd.Stderr = &errBuf
		var lines atomic.Int64
		pr, pw := io.Pipe()
		cmd.Stdout = pw
		go func() {
			sc := bufio.NewScanner(pr)
			for sc.Scan() {
				lines.Add(1)
			}
			io.Copy(io.Discard, pr)
		}()
		t := time.Now()
		err := cmd.Run()
		times = append(times, time.Since(t))
		pw.Close()
		if err != nil {
			return 0, fmt.Errorf("%w: %s", err, strings.TrimSpace(errBuf.String()))
		}
	}
	sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
	return times[1], nil
}
