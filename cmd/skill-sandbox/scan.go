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

	"github.com/skill-sandbox/skill-sandbox/internal/outfile"
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

// cmdScan implements "skill-sandbox scan": parse the flags, find the
// skill folders, scan and print each, print the summary, write SARIF.
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
	dirs, failed := scanDirs(paths, f.recursive, stderr)
	out := stdout
	if f.sarifFile == "-" {
		out = io.Discard
	}
	rep := newScanReport(out, stderr, &f, threshold)
	err = scan.Each(dirs, rep.add)
	if err == nil {
		err = rep.bw.Flush()
	}
	if err != nil {
		errorf(stderr, "scan: %v", err)
		return 1
	}
	if !f.jsonOut {
		rep.summary(out)
	}
	if f.sarifFile != "" {
		if err := writeSARIF(f.sarifFile, rep.ok, stdout); err != nil {
			errorf(stderr, "scan: %v", err)
			return 1
		}
	}
	if failed || rep.failed {
		return 1
	}
	return 0
}

// scanDirs returns the skill folders to scan: paths themselves, or with
// recursive the skill folders found under each. failed is true when a
// path could not be searched or holds no skill (the reason printed).
func scanDirs(paths []string, recursive bool, stderr io.Writer) (dirs []string, failed bool) {
	if !recursive {
		return paths, false
	}
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
	return dirs, failed
}

// scanReport prints the results of scan as they come, in the order of
// the folders, so that memory stays bounded for any number of skills (the
// SARIF log, written at the end, keeps them all), and counts them.
type scanReport struct {
	f         *scanFlags
	threshold scan.Severity
	stderr    io.Writer
	bw        *bufio.Writer
	enc       *json.Encoder
	counts    map[scan.Severity]int
	total     int
	scanned   int
	ok        []*scan.Result // kept for --sarif
	failed    bool           // a folder could not be scanned, or a finding fails the scan
}

// newScanReport returns the report of a scan printing to out.
func newScanReport(out, stderr io.Writer, f *scanFlags, threshold scan.Severity) *scanReport {
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &scanReport{f: f, threshold: threshold, stderr: stderr, bw: bw, enc: enc, counts: map[scan.Severity]int{}}
}

// add takes the result of one folder (scan.Each's callback).
func (r *scanReport) add(_ string, res *scan.Result, err error) error {
	if err != nil {
		if ferr := r.bw.Flush(); ferr != nil {
			return ferr
		}
		errorf(r.stderr, "%v", err)
		r.failed = true
		return nil
	}
	r.scanned++
	if r.f.sarifFile != "" {
		r.ok = append(r.ok, res)
	}
	for _, fd := range res.Findings {
		r.counts[fd.Severity]++
		r.total++
		// A file nobody read through fails a pre-install check unless
		// the caller accepts it explicitly.
		if fd.Severity >= r.threshold && !(r.f.acceptUnscanned && fd.Rule == scan.RuleNotScanned) {
			r.failed = true
		}
	}
	if r.f.jsonOut {
		return r.enc.Encode(res)
	}
	for _, f := range res.Findings {
		loc := filepath.Join(res.Path, filepath.FromSlash(f.File))
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d", loc, f.Line)
		}
		fmt.Fprintf(r.bw, "%-8s %s: %s [%s]\n", f.Severity, visible(loc), visible(f.Reason), f.Rule)
	}
	return nil
}

// summary prints the line of counts that ends the text output.
func (r *scanReport) summary(out io.Writer) {
	accepted := ""
	if r.f.acceptUnscanned {
		accepted = " (files not read through accepted)"
	}
	c := r.counts
	fmt.Fprintf(out, "%d skill(s) scanned: %d finding(s) (critical %d, high %d, medium %d, low %d, info %d); failing at %s and above%s\n",
		r.scanned, r.total, c[scan.Critical], c[scan.High], c[scan.Medium], c[scan.Low], c[scan.Info], r.threshold, accepted)
}

// writeSARIF writes the SARIF log to name, or to stdout for "-". The file
// is opened with outfile.Open: a root caller writing the report into a
// folder a sandboxed script could write does not follow a symlink the
// script planted there to truncate a file of its choice.
func writeSARIF(name string, results []*scan.Result, stdout io.Writer) error {
	// Files under the working folder (a CI job's checkout) get URIs
	// relative to it even when the skills were named by absolute paths.
	root, _ := os.Getwd()
	if name == "-" {
		return scan.WriteSARIF(stdout, results, toolVersion(), root)
	}
	f, err := outfile.Open(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
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
