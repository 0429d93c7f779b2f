package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

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

// scanFlags are the parsed flags of scan.
type scanFlags struct {
	recursive, jsonOut, acceptUnscanned bool
	sarifFile, failOn                   string
}

// newScanFlagSet returns scan's flags, bound to f.
func newScanFlagSet(f *scanFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("scan", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&f.recursive, "recursive", false, "search each PATH for skill folders")
	fs.BoolVar(&f.jsonOut, "json", false, "print one JSON object per skill per line")
	fs.StringVar(&f.sarifFile, "sarif", "", "also write a SARIF 2.1.0 log to `FILE` (- for stdout)")
	fs.StringVar(&f.failOn, "fail-on", "high", "lowest `SEVERITY` that fails the scan")
	fs.BoolVar(&f.acceptUnscanned, "accept-unscanned", false, "report files not read through (too large, unreadable) without failing on them")
	return fs
}

// cmdScan implements "skill-sandbox scan".
func cmdScan(args []string, stdout, stderr io.Writer) int {
	var f scanFlags
	fs := newScanFlagSet(&f)
	paths, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, scanUsage)
		return 0
	}
	var threshold scan.Severity
	if err == nil {
		threshold, err = scan.ParseSeverity(f.failOn)
	}
	if err == nil && len(paths) == 0 {
		err = errors.New("no PATH given")
	}
	if err != nil {
		return misuse(stderr, "scan", "%v", err)
	}
	failed := false
	dirs := paths
	if f.recursive {
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
	out := stdout
	if f.sarifFile == "-" {
		out = io.Discard
	}
	// Results are printed as they come, in the order of dirs, so that
	// memory stays bounded for any number of skills (the SARIF log,
	// written at the end, keeps them all).
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	counts := map[scan.Severity]int{}
	total, scanned := 0, 0
	var ok []*scan.Result
	err = scan.Each(dirs, func(_ string, res *scan.Result, err error) error {
		if err != nil {
			if ferr := bw.Flush(); ferr != nil {
				return ferr
			}
			errorf(stderr, "%v", err)
			failed = true
			return nil
		}
		scanned++
		if f.sarifFile != "" {
			ok = append(ok, res)
		}
		for _, fd := range res.Findings {
			counts[fd.Severity]++
			total++
			// A file nobody read through fails a pre-install check
			// unless the caller accepts it explicitly.
			if fd.Severity >= threshold && !(f.acceptUnscanned && fd.Rule == scan.RuleNotScanned) {
				failed = true
			}
		}
		if f.jsonOut {
			return enc.Encode(res)
		}
		for _, f := range res.Findings {
			loc := filepath.Join(res.Path, filepath.FromSlash(f.File))
			if f.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, f.Line)
			}
			fmt.Fprintf(bw, "%-8s %s: %s [%s]\n", f.Severity, visible(loc), visible(f.Reason), f.Rule)
		}
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		errorf(stderr, "scan: %v", err)
		return 1
	}
	if !f.jsonOut {
		accepted := ""
		if f.acceptUnscanned {
			accepted = " (files not read through accepted)"
		}
		fmt.Fprintf(out, "%d skill(s) scanned: %d finding(s) (critical %d, high %d, medium %d, low %d, info %d); failing at %s and above%s\n",
			scanned, total, counts[scan.Critical], counts[scan.High], counts[scan.Medium], counts[scan.Low], counts[scan.Info], threshold, accepted)
	}
	if f.sarifFile != "" {
		if err := writeSARIF(f.sarifFile, ok, stdout); err != nil {
			errorf(stderr, "scan: %v", err)
			return 1
		}
	}
	if failed {
		return 1
	}
	return 0
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
		return scan.WriteSARIF(stdout, results, toolVersion(), root)
	}
	f, err := run.OpenOutput(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
	if err != nil {
		return err
	}
	if err := scan.WriteSARIF(f, results, toolVersion(), root); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// visible escapes a skill's bytes for a terminal (validate.Visible).
func visible(s string) string { return validate.Visible(s) }
