//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
)

// probeReport is one row of the security table.
type probeReport struct {
	Num         int      `json:"num"`
	Name        string   `json:"name"`
	Attack      string   `json:"attack"`
	Policy      string   `json:"policy"`
	Baseline    string   `json:"baseline"`
	BaselineEv  string   `json:"baseline_evidence,omitempty"`
	Sandboxed   string   `json:"sandboxed"`
	StoppedBy   string   `json:"stopped_by"`
	Decisive    []string `json:"decisive_layers,omitempty"`
	Redundant   []string `json:"redundant_layers,omitempty"`
	AblationErr []string `json:"ablation_errors,omitempty"`
	Ablation    string   `json:"ablation,omitempty"`
	Evidence    string   `json:"evidence"`
	Steps       []step   `json:"steps,omitempty"`
	ExitCode    int      `json:"exit_code"`
	Signal      string   `json:"signal,omitempty"`
	DurationMS  int64    `json:"duration_ms"`
	RunnerError string   `json:"runner_error,omitempty"`
	Unpriv      string   `json:"unprivileged,omitempty"`
	UnprivEv    string   `json:"unprivileged_evidence,omitempty"`
	NoUserNS    string   `json:"no_userns_degraded,omitempty"`
	NoUserNSEv  string   `json:"no_userns_degraded_evidence,omitempty"`
	Pass        bool     `json:"pass"`
}

// layerNames are the kernel layers an audit record can list; attributions
// to anything else (validate, timeout, ...) are runner features.
func layerNames() []string {
	return []string{"userns", "pidns", "mountns", "ipcns", "utsns", "netns", "rlimits",
		"quotas", "capabilities", "no_new_privs", "landlock-fs", "landlock-net", "landlock-scope", "seccomp", "gvisor"}
}

// runSecurity runs every selected probe, prints the table and score, and
// reports whether the default policy held.
func runSecurity(cfg *config, rep *report, stdout, stderr io.Writer) bool {
	probes := allProbes()
	rep.Total = len(probes)
	ok := true
	if cfg.forbidNS {
		msg, err := defaultRefusal(cfg)
		if err != nil {
			ok = false
			rep.Failures = append(rep.Failures, err.Error())
		}
		rep.Refusal = msg
	}
	var rows []probeReport
	var applied, missing []string
	for _, p := range probes {
		if cfg.only != nil && !cfg.only[p.num] {
			continue
		}
		row, a, m := probeRow(cfg, p, stdout)
		if applied == nil && a != nil {
			applied, missing = a, m
		}
		if row.Pass && (row.Sandboxed == "blocked" || row.Sandboxed == "contained" || row.Sandboxed == "effect stopped") {
			rep.Score++
		}
		if row.Sandboxed == "skipped" {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("probe %d %s: %s", p.num, p.name, row.Evidence))
		}
		switch gap := knownGap(cfg, p.num, os.Getuid()); {
		case !row.Pass && gap != "":
			rep.KnownGaps = append(rep.KnownGaps, fmt.Sprintf("probe %d %s: %s (%s)", p.num, p.name, row.Sandboxed, gap))
		case !row.Pass:
			ok = false
			rep.Failures = append(rep.Failures, fmt.Sprintf("probe %d %s: %s: %s", p.num, p.name, row.Sandboxed, truncate(row.Evidence, 200)))
		case gap != "":
			ok = false
			rep.Failures = append(rep.Failures, fmt.Sprintf("probe %d %s: %s, but it is listed as a known gap of the %s backend: take it off gvisorGaps", p.num, p.name, row.Sandboxed, cfg.backend))
		}
		rows = append(rows, row)
	}
	if cfg.unpriv && os.Getuid() == 0 {
		if !addUnprivileged(cfg, rep, rows, stderr) {
			ok = false
		}
	}
	if cfg.noUserNS && os.Getuid() == 0 && !cfg.forbidNS {
		if !runWithoutUserNS(cfg, rep, rows, stderr) {
			ok = false
		}
	}
	rep.Probes = rows
	rep.LayersApplied, rep.LayersMissing = applied, missing
	printSecurity(cfg, rep, rows, stdout)
	return ok
}

// probeRow runs probe p without the sandbox (unless -no-baseline) and with
// it, ablates it when the sandbox stopped it, and returns its row and the
// layers the sandboxed run's audit record lists as applied and missing.
func probeRow(cfg *config, p probe, stdout io.Writer) (row probeReport, applied, missing []string) {
	row = probeReport{Num: p.num, Name: p.name, Attack: p.attack, Policy: p.policy, Baseline: "-"}
	if !cfg.noBaseline {
		j, o, err := runProbe(cfg, p, false)
		switch {
		case err != nil:
			row.Baseline, row.BaselineEv = "error", err.Error()
		default:
			row.Baseline, row.BaselineEv = baselineWord(j.verdict), j.evidence
			if cfg.verbose {
				fmt.Fprintf(stdout, "--- baseline %s\n%s%s", p.name, o.stdout, o.stderr)
			}
		}
	}
	j, o, err := runProbe(cfg, p, true)
	if why := gvisorSkip(cfg, o); err == nil && why != "" {
		row.Sandboxed, row.Evidence = "skipped", why
		row.Pass = !strings.HasPrefix(why, "ran on the")
		return row, nil, nil
	}
	if err != nil {
		row.Sandboxed, row.Evidence, row.RunnerError = "ERROR", err.Error(), err.Error()
	} else {
		if cfg.verbose {
			fmt.Fprintf(stdout, "--- sandboxed %s (exit %d %s)\n%s%s", p.name, o.exitCode, o.signal, o.stdout, o.stderr)
		}
		applied, missing = recordLayers(o.record)
		row.Steps, row.ExitCode, row.Signal = o.steps, o.exitCode, o.signal
		row.DurationMS = o.duration.Milliseconds()
		row.Evidence = j.evidence
		row.StoppedBy = checkLayers(j.layer, applied)
		row.Sandboxed = sandboxWord(p.policy, j.verdict)
		if !probeRan(p, o) && j.verdict != vEffect && row.StoppedBy != "validate" && row.StoppedBy != "refused" {
			row.Sandboxed = "ERROR"
			row.RunnerError = fmt.Sprintf("probe did not run (exit %d): %s", o.exitCode, truncate(o.stderr, 300))
			row.Evidence = row.RunnerError
		}
	}
	if cfg.ablate && (row.Sandboxed == "blocked" || row.Sandboxed == "contained" ||
		row.Sandboxed == "effect stopped" || row.Sandboxed == "partial") && len(ablationCandidates(p.num)) > 0 {
		row.Decisive, row.Redundant, row.AblationErr = ablate(cfg, p)
		row.Ablation = describeAblation(row.Decisive, row.Redundant, row.AblationErr)
	}
	row.Pass = passes(p.policy, row.Sandboxed)
	return row, applied, missing
}

// addUnprivileged reruns the sandboxed probes as an unprivileged user and
// adds the results to rows; a probe that fails there fails, and no longer
// scores. It reports whether every probe still passes.
func addUnprivileged(cfg *config, rep *report, rows []probeReport, stderr io.Writer) bool {
	ok := true
	up, skip := runUnprivileged(cfg, stderr)
	if skip != "" {
		rep.UnprivSkipped = skip
	}
	for i := range rows {
		r := &rows[i]
		u, found := up[r.Num]
		if !found {
			continue
		}
		r.Unpriv, r.UnprivEv = u.Sandboxed, u.Evidence
		if u.Sandboxed == "skipped" && u.Pass {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("probe %d %s as uid %d: %s", r.Num, r.Name, nobodyID, u.Evidence))
			continue
		}
		gap := knownGap(cfg, r.Num, nobodyID)
		switch {
		case !passes(r.Policy, u.Sandboxed) && gap != "":
			rep.KnownGaps = append(rep.KnownGaps, fmt.Sprintf("probe %d %s as uid %d: %s (%s)", r.Num, r.Name, nobodyID, u.Sandboxed, gap))
			continue
		case passes(r.Policy, u.Sandboxed) && gap != "":
			ok = false
			rep.Failures = append(rep.Failures, fmt.Sprintf("probe %d %s as uid %d: %s, but it is listed as a known gap of the %s backend: take it off gvisorGaps", r.Num, r.Name, nobodyID, u.Sandboxed, cfg.backend))
		}
		if !passes(r.Policy, u.Sandboxed) {
			if r.Pass {
				r.Pass = false
				ok = false
				if passes(r.Policy, r.Sandboxed) {
					// counted as blocked above; it is not for every caller
					rep.Score--
				}
			}
			rep.Failures = append(rep.Failures, fmt.Sprintf("probe %d %s as uid %d: %s (%s)", r.Num, r.Name, nobodyID, u.Sandboxed, truncate(u.Evidence, 120)))
		}
	}
	return ok
}

// runProbe sets up, runs, judges and cleans up one probe in one mode.
func runProbe(cfg *config, p probe, sandboxed bool) (judgement, *outcome, error) {
	e := newEnv(cfg, p, sandboxed)
	defer e.cleanup()
	if p.setup != nil {
		if err := p.setup(e); err != nil {
			return judgement{}, nil, fmt.Errorf("setup: %w", err)
		}
	}
	var o *outcome
	switch {
	case e.drive != nil:
		o = e.drive(sandboxed)
	case sandboxed:
		o = runSandboxed(cfg, e.inv)
	default:
		tmp, err := os.MkdirTemp("", "skill-sandbox-baseline-")
		if err != nil {
			return judgement{}, nil, err
		}
		defer os.RemoveAll(tmp)
		if e.inv.timeout == 0 {
			e.inv.timeout = 20 * time.Second
		}
		o = runBaseline(cfg, e.inv, tmp)
	}
	if e.after != nil {
		e.after(o)
	}
	if o.err != nil {
		return judgement{}, o, o.err
	}
	return p.judge(e, o), o, nil
}

// newEnv prepares the host-side state of one probe run.
func newEnv(cfg *config, p probe, sandboxed bool) *env {
	e := &env{cfg: cfg, sandboxed: sandboxed, nonce: newNonce()}
	e.skillDir = filepath.Join(cfg.root, "testdata", "attacks", p.name)
	e.inv = invocation{skillDir: e.skillDir, script: "probe.py"}
	return e
}

// probeRan reports whether the probe's script actually started.
func probeRan(p probe, o *outcome) bool {
	sig, _ := o.record["signal"].(string) // the script's, e.g. an OOM kill by the run's cgroup
	return len(o.steps) > 0 || o.result != "" || o.signal != "" || o.killed ||
		recordBool(o.record, "timed_out") || sig != ""
}

func baselineWord(v string) string {
	switch v {
	case vEffect:
		return "allowed"
	case vPartial:
		return "partial"
	}
	return "blocked"
}

func sandboxWord(policy, v string) string {
	switch v {
	case vEffect:
		return "ALLOWED"
	case vPartial:
		return "partial"
	}
	switch policy {
	case langLevel:
		return "effect stopped"
	case containedOK:
		return "contained"
	}
	return "blocked"
}

// passes applies the default policy to one sandboxed verdict.
func passes(policy, word string) bool {
	switch word {
	case "blocked", "contained", "effect stopped":
		return true
	case "partial":
		return policy == partialOK
	}
	return false
}

// checkLayers marks attributed kernel layers the audit record did not list
// as applied with a trailing "?".
func checkLayers(attrib string, applied []string) string {
	if attrib == "" {
		return "?"
	}
	if applied == nil {
		return attrib
	}
	have := map[string]bool{}
	for _, a := range applied {
		have[a] = true
	}
	known := map[string]bool{}
	for _, l := range layerNames() {
		known[l] = true
	}
	var out []string
	for _, part := range strings.Split(attrib, "+") {
		alts := strings.Split(part, "/")
		anyKnown, anyHave := false, false
		for _, a := range alts {
			anyKnown = anyKnown || known[a]
			anyHave = anyHave || have[a]
		}
		if anyKnown && !anyHave {
			part += "?"
		}
		out = append(out, part)
	}
	return strings.Join(out, "+")
}

// printSecurity writes the table and the score.
func printSecurity(cfg *config, rep *report, rows []probeReport, w io.Writer) {
	fmt.Fprintf(w, "skill-sandbox security probes (%s, uid %d, kernel %s, backend %s)\n", cfg.bin, rep.UID, rep.Kernel, cfg.backend)
	if rep.AblationSkipped != "" {
		fmt.Fprintf(w, "ablation skipped: %s\n", rep.AblationSkipped)
	}
	fmt.Fprintf(w, "layers applied: %s\n", strings.Join(rep.LayersApplied, " "))
	if len(rep.LayersMissing) > 0 {
		fmt.Fprintf(w, "layers missing: %s\n", strings.Join(rep.LayersMissing, "; "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	unpriv := false
	for _, r := range rows {
		unpriv = unpriv || r.Unpriv != ""
	}
	if rep.UnprivSkipped != "" && rep.UID == 0 {
		fmt.Fprintf(w, "unprivileged pass skipped: %s\n\n", rep.UnprivSkipped)
	}
	degraded := false
	for _, r := range rows {
		degraded = degraded || r.NoUserNS != ""
	}
	if rep.NoUserNSSkipped != "" {
		fmt.Fprintf(w, "pass without user namespaces skipped: %s\n\n", rep.NoUserNSSkipped)
	}
	if rep.Refusal != "" {
		fmt.Fprintf(w, "without user namespaces, the default refuses: %s\n\n", truncate(rep.Refusal, 400))
	}
	fmt.Fprintln(tw, "#\tprobe\tbaseline\tsandboxed\t"+map[bool]string{true: "uid 65534\t"}[unpriv]+
		map[bool]string{true: "no userns, --allow-degraded\t"}[degraded]+"stopped by (errno)\tdecisive (ablation)\tevidence")
	for _, r := range rows {
		ab := "-"
		switch {
		case len(r.Decisive) > 0:
			ab = strings.Join(r.Decisive, ", ")
		case len(r.Redundant) > 0:
			ab = "layered (no single one)"
		}
		up := ""
		if unpriv {
			up = r.Unpriv + "\t"
			if r.Unpriv == "" {
				up = "-\t"
			}
		}
		dg := ""
		if degraded {
			dg = r.NoUserNS + "\t"
			if r.NoUserNS == "" {
				dg = "-\t"
			}
		}
		ev := r.Evidence
		if r.Unpriv != "" && !passes(r.Policy, r.Unpriv) && passes(r.Policy, r.Sandboxed) {
			ev = "uid 65534: " + r.UnprivEv + " | root: " + ev
		}
		if r.NoUserNS != "" && !passes(r.Policy, r.NoUserNS) {
			ev = "degraded: " + r.NoUserNSEv + " | " + ev
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s%s%s\t%s\t%s\n", r.Num, r.Attack, r.Baseline, r.Sandboxed, up, dg, r.StoppedBy, ab, truncate(ev, 130))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nscore: %d/%d blocked (default policy%s)\n", rep.Score, rep.Total,
		map[bool]string{true: ", as root and as uid 65534"}[unpriv])
	if len(rep.Skipped) > 0 {
		fmt.Fprintf(w, "skipped, not scored (%d):\n", len(rep.Skipped))
		for _, sk := range rep.Skipped {
			fmt.Fprintf(w, "  %s\n", truncate(sk, 300))
		}
	}
	if degraded && rep.Refusal != "" {
		n := 0
		for _, r := range rows {
			if r.NoUserNS != "" && !passes(r.Policy, r.NoUserNS) {
				n++
			}
		}
		fmt.Fprintf(w, "without user namespaces: the default refuses; with --allow-degraded %d probe(s) get through (listed in docs/security.md)\n", n)
	}
	fmt.Fprintln(w, "  9-10 \"contained\": the program runs, its harm is stopped; 16-18 \"effect stopped\": language-level,")
	fmt.Fprintln(w, "  the import/eval runs, what it tries next is stopped; 20 \"partial\": the kernel release stays visible.")
}
