//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
)

// usabilityCase is one legitimate skill run that must succeed.
type usabilityCase struct {
	Skill     string   `json:"skill"`
	Script    string   `json:"script"`
	Flags     []string `json:"flags,omitempty"`
	What      string   `json:"what"`
	Baseline  string   `json:"baseline"`
	Sandboxed string   `json:"sandboxed"`
	Detail    string   `json:"detail"`
	Pass      bool     `json:"pass"`

	stdin     string
	args      []string
	module    bool                                // Script is a Python module (--module)
	needs     string                              // program that must exist on the sandbox PATH, or ""
	sameAsBar bool                                // the summary must equal the baseline's
	check     func(cfg *config, o *outcome) error // extra check on the sandboxed run
	cleanup   func(o *outcome)                    // after the sandboxed run
	setup     func() (*grantRun, error)           // files and grants of the case (grants.go); no baseline
}

// usabilityCases lists the suite.
func usabilityCases() []*usabilityCase {
	cases := []*usabilityCase{
		{Skill: "read-reference", Script: "read_ref.py", What: "read its own references/ file", sameAsBar: true},
		{Skill: "write-output", Script: "write_out.py", What: "write an output file in the work folder ($TMPDIR)"},
		{Skill: "write-output", Script: "write_out.py", Flags: []string{"--workdir", "--keep-workdir"},
			What: "write into --workdir, kept with --keep-workdir", check: checkKeptFile, cleanup: removeKept},
		{Skill: "json-csv", Script: "summarise.py", What: "stdlib csv and json", sameAsBar: true},
		{Skill: "subprocess-helper", Script: "main.py", What: "spawn helper.py, sort, sh; thread pool", sameAsBar: true},
		{Skill: "bash-pipeline", Script: "count_words.sh", What: "bash tr|grep|sort|uniq -c pipeline", sameAsBar: true},
		{Skill: "node-script", Script: "stats.js", What: "node script (fs, path, os.tmpdir)", needs: "node", sameAsBar: true},
		{Skill: "unicode-output", Script: "hello.py", What: "print UTF-8 text", sameAsBar: true,
			check: func(_ *config, o *outcome) error {
				if !strings.Contains(o.stdout, "Grüße, 世界 — naïve café 🚀") {
					return fmt.Errorf("UTF-8 text mangled")
				}
				return nil
			}},
		{Skill: "stdin-filter", Script: "upper.py", What: "read standard input", stdin: "hello wörld\n", sameAsBar: true},
		{Skill: "sqlite-tempfile", Script: "db.py", What: "sqlite3, tempfile, zlib, localtime", sameAsBar: true},
		{Skill: "tmp-by-name", Script: "scratch.py", What: "write and read /tmp by name (ignoring TMPDIR)", sameAsBar: true,
			check: privateTmp},
		{Skill: "dev-stderr", Script: "log.sh", What: "echo > /dev/stderr, /dev/stdout, /proc/self/fd/1", sameAsBar: true,
			check: func(_ *config, o *outcome) error {
				for _, want := range []string{"diagnostic via /dev/stderr\n", "diagnostic via /dev/fd/2\n"} {
					if !strings.Contains(o.stderr, want) {
						return fmt.Errorf("stderr lacks %q", strings.TrimSpace(want))
					}
				}
				if !strings.Contains(o.stdout, "result via /dev/stdout\nresult via /proc/self/fd/1\n") {
					return fmt.Errorf("stdout lacks the lines written by name")
				}
				return nil
			}},
		{Skill: "python-module", Script: "scripts.package_skill", Flags: []string{"--module"}, module: true, args: []string{"demo"},
			What: "python -m scripts.package_skill from the skill root", sameAsBar: true},
		{Skill: "loopback-server", Script: "serve_test.py", What: "HTTP server on 127.0.0.1, fetched by the script (also as localhost)", sameAsBar: true},
		{Skill: "office-convert", Script: "convert.py", Flags: []string{"--workdir", "--keep-workdir", "--timeout", "180s"},
			What: "LibreOffice: docx to PDF (soffice --headless)", needs: "soffice", check: checkKeptPDF, cleanup: removeKept},
		// node started by bash gets no interpreter allowance of its own:
		// the cgroup, or the watch without one, holds the memory, so
		// RLIMIT_AS is relaxed for the tree (docs/run.md).
		{Skill: "node-from-bash", Script: "build.sh", What: "bash script that runs node itself",
			needs: "node", sameAsBar: true},
	}
	return append(cases, grantCases()...)
}

// privateTmp checks that the /tmp the script wrote to (its TMPDEV line)
// is not the host's /tmp.
func privateTmp(_ *config, o *outcome) error {
	var st syscall.Stat_t
	if err := syscall.Stat("/tmp", &st); err != nil {
		return err
	}
	for _, l := range strings.Split(o.stdout, "\n") {
		if v, ok := strings.CutPrefix(l, "TMPDEV="); ok {
			if v == strconv.FormatUint(uint64(st.Dev), 10) {
				return fmt.Errorf("the script wrote to the host's /tmp")
			}
			return nil
		}
	}
	return fmt.Errorf("no TMPDEV line")
}

// runUsability runs the usability suite and prints its table.
func runUsability(cfg *config, rep *report, stdout, stderr io.Writer) bool {
	ok := true
	for _, c := range usabilityCases() {
		dir := filepath.Join(cfg.root, "testdata", "usability", c.Skill)
		inv := invocation{skillDir: dir, script: c.Script, flags: c.Flags, stdin: c.stdin, args: c.args, module: c.module}
		if c.needs != "" {
			if _, err := lookSystem(c.needs); err != nil {
				c.Baseline, c.Sandboxed, c.Detail, c.Pass = "-", "skipped", c.needs+" not installed", true
				rep.Usability = append(rep.Usability, *c)
				continue
			}
		}
		if c.setup != nil {
			g, err := c.setup()
			if err != nil {
				c.Baseline, c.Sandboxed, c.Detail = "-", "FAIL", err.Error()
				ok = false
				rep.Failures = append(rep.Failures, fmt.Sprintf("usability %s/%s: setup: %v", c.Skill, c.Script, err))
				rep.Usability = append(rep.Usability, *c)
				continue
			}
			inv.flags, inv.args, inv.dir = g.flags, g.args, g.dir
			c.Baseline = "-" // the grants are the point: no unsandboxed baseline
			c.Flags, c.check, c.cleanup = g.flags, func(_ *config, o *outcome) error { return g.check(o) }, func(*outcome) { g.cleanup() }
		}
		baseSummary := ""
		if !cfg.noBaseline && c.setup == nil {
			tmp, err := os.MkdirTemp("", "skill-sandbox-usability-")
			if err == nil {
				b := runBaseline(cfg, inv, tmp)
				os.RemoveAll(tmp)
				baseSummary = summary(b)
				c.Baseline = okWord(b.err == nil && b.exitCode == 0 && baseSummary != "")
			}
		}
		o := runSandboxed(cfg, inv)
		if cfg.verbose {
			fmt.Fprintf(stdout, "--- usability %s %s (exit %d)\n%s%s", c.Skill, c.Script, o.exitCode, o.stdout, o.stderr)
		}
		s := summary(o)
		var problem error
		switch {
		case o.err != nil:
			problem = o.err
		case o.exitCode != 0 || s == "":
			problem = fmt.Errorf("exit %d %s: %s", o.exitCode, o.signal, truncate(lastLines(o.stderr, 3), 200))
		case c.sameAsBar && baseSummary != "" && s != baseSummary:
			problem = fmt.Errorf("output differs from the baseline: %q vs %q", s, baseSummary)
		case c.check != nil:
			problem = c.check(cfg, o)
		}
		if c.cleanup != nil {
			c.cleanup(o)
		}
		c.Pass = problem == nil
		c.Sandboxed = okWord(c.Pass)
		if problem != nil {
			c.Detail = problem.Error()
			ok = false
			rep.Failures = append(rep.Failures, fmt.Sprintf("usability %s/%s: %v", c.Skill, c.Script, problem))
		} else {
			c.Detail = s
		}
		rep.Usability = append(rep.Usability, *c)
	}
	passed := 0
	fmt.Fprintf(stdout, "\nusability suite (legitimate skills, default flags plus the grants shown)\n\n")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "skill\twhat\tbaseline\tsandboxed\tdetail")
	for _, c := range rep.Usability {
		if c.Pass {
			passed++
		}
		name := c.Skill + "/" + c.Script
		if len(c.Flags) > 0 {
			name += " " + strings.Join(c.Flags, " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, c.What, c.Baseline, c.Sandboxed, truncate(c.Detail, 90))
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nusability: %d/%d pass\n", passed, len(rep.Usability))
	return ok
}

// summary is the text after USABILITY-OK, or "".
func summary(o *outcome) string {
	for _, l := range strings.Split(o.stdout, "\n") {
		if rest, ok := strings.CutPrefix(l, "USABILITY-OK "); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

func okWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// keptDir is the working directory the write-output script printed.
func keptDir(o *outcome) string {
	for _, l := range strings.Split(o.stdout, "\n") {
		if d, ok := strings.CutPrefix(l, "CWD="); ok {
			return strings.TrimSpace(d)
		}
	}
	return ""
}

// checkKeptFile verifies that the report written into --workdir is on the
// host after the run, kept by --keep-workdir.
func checkKeptFile(_ *config, o *outcome) error {
	d := keptDir(o)
	if d == "" {
		return fmt.Errorf("script did not print its working directory")
	}
	b, err := os.ReadFile(filepath.Join(d, "report.txt"))
	if err != nil {
		return fmt.Errorf("kept work folder: %w", err)
	}
	if !strings.HasPrefix(string(b), "line 0\n") {
		return fmt.Errorf("kept report.txt has unexpected content")
	}
	return nil
}

// checkKeptPDF reads the PDF that office-convert left in its kept work
// folder: LibreOffice may exit 0 without writing it, so the output itself
// is checked.
func checkKeptPDF(_ *config, o *outcome) error {
	d := keptDir(o)
	if d == "" {
		return fmt.Errorf("script did not print its working directory")
	}
	b, err := os.ReadFile(filepath.Join(d, "report.pdf"))
	if err != nil {
		return fmt.Errorf("kept work folder: %w", err)
	}
	if !strings.HasPrefix(string(b), "%PDF-") || !strings.Contains(string(b[max(0, len(b)-1024):]), "%%EOF") || len(b) < 1000 {
		return fmt.Errorf("report.pdf is not a PDF (%d bytes)", len(b))
	}
	return nil
}

// removeKept deletes the kept work folder after the check.
func removeKept(o *outcome) {
	d := keptDir(o)
	if d != "" && strings.Contains(d, "skill-sandbox") {
		os.RemoveAll(d)
	}
}
