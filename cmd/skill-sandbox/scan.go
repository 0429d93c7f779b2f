package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/scan"
	"github.com/skill-sandbox/skill-sandbox/validate"
)

const scanUsage = `Usage: skill-sandbox scan [--recursive] [--json] [--sarif FILE] [--fail-on SEVERITY] [--accept-unscanned] PATH...

Scan skill folders before installing them: hidden Unicode, prompt injection
in Markdown, downloads piped into a shell, credential reads, decoded and
executed blobs, binaries and archives, load-time commands, and (as info)
the network endpoints named in code. Every finding has a severity (info,
low, medium, high, critical), a rule id, the file, the line and a reason.
Rules and their limits: docs/scan.md.

Flags:
    --recursive         treat each PATH as a folder to search for skills
                        (folders holding SKILL.md)
    --json              print one JSON object per skill per line (JSONL):
                        path, files, findings
    --sarif FILE        also write the findings as SARIF 2.1.0 to FILE
                        ("-" for stdout, replacing the normal output)
    --fail-on SEVERITY  exit 1 if any finding is at or above SEVERITY
                        (default high)
    --accept-unscanned  do not fail on files that were not read through
                        (not-scanned: a script or Markdown file over 1 MiB,
                        an unreadable file); they are still reported

Exit status: 0 no finding at or above --fail-on, 1 such a finding or a
folder that cannot be scanned, 2 usage error.
`

// cmdScan implements "skill-sandbox scan".
func cmdScan(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	recursive := fs.Bool("recursive", false, "search folders for skills")
	jsonOut := fs.Bool("json", false, "print JSONL")
	sarifFile := fs.String("sarif", "", "write SARIF to FILE")
	failOn := fs.String("fail-on", "high", "failing severity")
	acceptUnscanned := fs.Bool("accept-unscanned", false, "do not fail on not-scanned findings")
	paths, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, scanUsage)
		return 0
	}
	var threshold scan.Severity
	if err == nil {
		threshold, err = scan.ParseSeverity(*failOn)
	}
	if err == nil && len(paths) == 0 {
		err = errors.New("no PATH given")
	}
	if err != nil {
		errorf(stderr, "scan: %v", err)
		seeHelp(stderr, "scan")
		return 2
	}
	failed := false
	dirs := paths
	if *recursive {
		dirs = nil
		for _, root := range paths {
			found, err := validate.Find(root)
			if err != nil {
				errorf(stderr, "scan: %v", err)
				failed = true
				continue
			}
			if len(found) == 0 {
				errorf(stderr, "scan: no skills (folders with SKILL.md) under %s", root)
				failed = true
			}
			dirs = append(dirs, found...)
		}
	}
	results, errs := scanAll(dirs)
	var ok []*scan.Result
	for i, res := range results {
		if errs[i] != nil {
			errorf(stderr, "%v", errs[i])
			failed = true
			continue
		}
		ok = append(ok, res)
	}

	out := stdout
	if *sarifFile == "-" {
		out = io.Discard
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	counts := map[scan.Severity]int{}
	total := 0
	for _, res := range ok {
		for _, f := range res.Findings {
			counts[f.Severity]++
			total++
			// A file nobody read through fails a pre-install check
			// unless the caller accepts it explicitly.
			if f.Severity >= threshold && !(*acceptUnscanned && f.Rule == scan.RuleNotScanned) {
				failed = true
			}
		}
		if *jsonOut {
			if err := enc.Encode(res); err != nil {
				errorf(stderr, "scan: %v", err)
				return 1
			}
			continue
		}
		for _, f := range res.Findings {
			loc := filepath.Join(res.Path, filepath.FromSlash(f.File))
			if f.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, f.Line)
			}
			fmt.Fprintf(out, "%-8s %s: %s [%s]\n", f.Severity, visible(loc), visible(f.Reason), f.Rule)
		}
	}
	if !*jsonOut {
		accepted := ""
		if *acceptUnscanned {
			accepted = " (files not read through accepted)"
		}
		fmt.Fprintf(out, "%d skill(s) scanned: %d finding(s) (critical %d, high %d, medium %d, low %d, info %d); failing at %s and above%s\n",
			len(ok), total, counts[scan.Critical], counts[scan.High], counts[scan.Medium], counts[scan.Low], counts[scan.Info], threshold, accepted)
	}
	if *sarifFile != "" {
		if err := writeSARIF(*sarifFile, ok, stdout); err != nil {
			errorf(stderr, "scan: %v", err)
			return 1
		}
	}
	if failed {
		return 1
	}
	return 0
}

// scanAll scans dirs concurrently, keeping their order.
func scanAll(dirs []string) ([]*scan.Result, []error) {
	results := make([]*scan.Result, len(dirs))
	errs := make([]error, len(dirs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(dirs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], errs[i] = scan.Skill(dirs[i])
			}
		}()
	}
	for i := range dirs {
		next <- i
	}
	close(next)
	wg.Wait()
	return results, errs
}

// writeSARIF writes the SARIF log to name, or to stdout for "-". The file
// is opened with run.OpenOutput: a root caller writing the report into a
// folder a sandboxed script could write does not follow a symlink the
// script planted there to truncate a file of its choice.
func writeSARIF(name string, results []*scan.Result, stdout io.Writer) error {
	// Files under the working folder (a CI job's checkout) get URIs
	// relative to it even when the skills were named by absolute paths.
	root, _ := os.Getwd()
	if name == "-" {
		return scan.WriteSARIF(stdout, results, Version, root)
	}
	f, err := run.OpenOutput(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	if err := scan.WriteSARIF(f, results, Version, root); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// visible escapes what a hostile skill could use to rewrite the report
// on a terminal or in a CI log viewer that renders ANSI: its file names
// and the text its findings quote are the skill's own bytes. C0 controls
// (ESC, CR, newline), DEL, C1 controls and bytes that are not UTF-8
// become \xNN; Unicode format characters (bidi controls, zero-width
// characters, tag characters) and line and paragraph separators become
// \uNNNN or \UNNNNNNNN, so a finding reads as what it is.
func visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r < 0x20, r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r >= 0x80 && r <= 0x9f, unicode.Is(unicode.Cf, r), r == 0x2028, r == 0x2029:
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
