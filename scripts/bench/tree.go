package main

import (
	"fmt"
	"io"
	"time"
)

// treeRuns caps the rounds of the tree pass (runTree) per program.
const treeRuns = 50

// treeField picks one measurement of every run.
func treeField(runs []treeRun, f func(treeRun) time.Duration) []time.Duration {
	out := make([]time.Duration, 0, len(runs))
	for _, t := range runs {
		out = append(out, f(t))
	}
	return out
}

// printGone prints, from the tree pass, how long each command took until
// it returned and until its whole process tree was gone, and the ratio of
// the overheads both ways. The two differ for bubblewrap, whose outer
// process exits while its pid 1 still tears the sandbox's namespaces
// down; skill-sandbox returns once it has reaped its own pid 1, so that no
// process of the run outlives the call.
func printGone(w io.Writer, results []latency) {
	returned := func(t treeRun) time.Duration { return t.returned }
	gone := func(t treeRun) time.Duration { return t.gone }
	fmt.Fprintf(w, "\nUntil the command returns and until its whole process tree is gone (every process reaped), each run under the bench's reaping wrapper (a child subreaper), up to %d rounds in random order, medians; bubblewrap's outer process returns before its pid 1 has torn the sandbox down, skill-sandbox after reaping its own:\n\n", treeRuns)
	fmt.Fprintln(w, "| program | bare | skill-sandbox returned | skill-sandbox gone | bubblewrap returned | bubblewrap gone | ratio of overheads, returned | ratio of overheads, gone |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		b := treeField(r.bareTree, returned)
		sr, sg := treeField(r.sbTree, returned), treeField(r.sbTree, gone)
		br, bg := treeField(r.bwTree, returned), treeField(r.bwTree, gone)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.kind.label, cell(b, 0.5), cell(sr, 0.5), cell(sg, 0.5), cell(br, 0.5), cell(bg, 0.5),
			overheadRatio(b, sr, br), overheadRatio(b, sg, bg))
	}
}

// overheadRatio is (median(s) − median(bare)) / (median(bw) − median(bare)),
// or "–" when a side has no runs or bubblewrap no overhead.
func overheadRatio(bare, s, bw []time.Duration) string {
	if len(bare) == 0 || len(s) == 0 || len(bw) == 0 {
		return "–"
	}
	b := quantile(bare, 0.5)
	d := quantile(bw, 0.5) - b
	if d <= 0 {
		return "–"
	}
	return ratioText(quantile(s, 0.5)-b, d)
}
