package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

// ratioText is an overhead as a multiple of bubblewrap's, as the tables
// print it.
func ratioText(over, bwrapOver time.Duration) string {
	return fmt.Sprintf("%.2f", float64(over)/float64(bwrapOver))
}

// shownQuantile is a quantile the latency tables show.
type shownQuantile struct {
	name string
	q    float64
}

// shownQuantiles are the quantiles of the latency tables.
func shownQuantiles() []shownQuantile {
	return []shownQuantile{{"median", 0.5}, {"p95", 0.95}}
}

// quantile returns the q-quantile (nearest rank) of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	i := int(q*float64(len(s))+0.999999) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// machine describes the host in one line.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := runtime.GOOS
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = "Linux " + strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%d × %s, %s, %s, uid %d", runtime.NumCPU(), model, kernel, runtime.Version(), os.Getuid())
}

// corpusRun is the median time of one command over the corpus.
type corpusRun struct {
	command string
	dur     time.Duration
	err     error
}

// rate is the throughput of one way of running with several in flight.
type rate struct {
	name    string
	perSec  float64
	err     error
	present bool
}

// concurrentRates measures runs per second of k with o.conc in flight:
// bare, skill-sandbox and, when installed, bubblewrap.
func concurrentRates(o options, total int, base string, k kind) []rate {
	var rs []rate
	add := func(name string, fn func() error) {
		v, err := concurrentRate(o.conc, total, fn)
		rs = append(rs, rate{name: name, perSec: v, err: err, present: true})
	}
	add("bare", func() error { return runBare(base, k) })
	add("skill-sandbox", func() error { return runSandboxed(o.bin, base, k) })
	if o.bwrap != "" {
		add("bubblewrap", func() error { return runBwrap(o.bwrap, base, k) })
	} else {
		rs = append(rs, rate{name: "bubblewrap"})
	}
	return rs
}

// cell formats a duration, or "–" when there are no samples.
func cell(ds []time.Duration, q float64) string {
	if len(ds) == 0 {
		return "–"
	}
	return ms(quantile(ds, q))
}

func printTable(w io.Writer, o options, results []latency, corpus []corpusRun, total int, rates []rate) {
	fmt.Fprintf(w, "Machine: %s. %s UTC.\n", machine(), time.Now().UTC().Format("2006-01-02 15:04"))
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(w, "Load average at the end: %s.\n", strings.Join(strings.Fields(string(b))[:3], " "))
	}
	if cached, large, err := cachedFolios(o.bin); err != nil {
		fmt.Fprintf(w, "The binary's page cache: not read (%v).\n", err)
	} else {
		fmt.Fprintf(w, "The binary's page cache: %d of its %d cached pages in large folios (how the file was written decides it, and it moves the start: see docs/bench.md).\n", large, cached)
	}
	bw := "bubblewrap (not installed)"
	if o.bwrap != "" {
		bw = "bubblewrap"
	}
	fmt.Fprintf(w, "\nStart of a do-nothing program, %d runs each, in rounds of one of each in random order, %s apart; overhead = sandboxed − bare.\n\n", o.n, o.settle)
	fmt.Fprintf(w, "| program | quantile | bare | skill-sandbox | %s | skill-sandbox overhead | bubblewrap overhead | ratio of overheads |\n", bw)
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		for _, q := range shownQuantiles() {
			b, s := quantile(r.bare, q.q), quantile(r.sandboxed, q.q)
			bwOver, ratio := "–", "–"
			if len(r.bwrap) > 0 {
				bwq := quantile(r.bwrap, q.q)
				bwOver = ms(bwq - b)
				ratio = ratioText(s-b, bwq-b)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.kind.label, q.name, ms(b), ms(s), cell(r.bwrap, q.q), ms(s-b), bwOver, ratio)
		}
	}
	fmt.Fprint(w, "\nCPU per run (user + system of the process tree, median):\n\n")
	fmt.Fprintln(w, "| program | bare | skill-sandbox | bubblewrap |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	cpu := func(t treeRun) time.Duration { return t.cpu }
	for _, r := range results {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.kind.label, cell(treeField(r.bareTree, cpu), 0.5), cell(treeField(r.sbTree, cpu), 0.5), cell(treeField(r.bwTree, cpu), 0.5))
	}
	printGone(w, results)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| measurement | value |")
	fmt.Fprintln(w, "|---|---:|")
	for _, r := range results {
		if len(r.rssKB) == 0 {
			fmt.Fprintf(w, "| supervisor's own peak RSS, %s | not measured: %v |\n", r.kind.label, r.rssErr)
			continue
		}
		var kb []time.Duration // reuse quantile on KiB values
		for _, k := range r.rssKB {
			kb = append(kb, time.Duration(k))
		}
		fmt.Fprintf(w, "| supervisor's own peak RSS (VmHWM at exit), %s, median / max of %d | %.1f / %.1f MiB |\n", r.kind.label, len(kb), float64(quantile(kb, 0.5))/1024, float64(quantile(kb, 1))/1024)
	}
	for _, c := range corpus {
		if c.err == nil {
			fmt.Fprintf(w, "| %s --recursive, %d skills (median of 3) | %.2f s = %.0f skills/s |\n", c.command, o.corpus, c.dur.Seconds(), float64(o.corpus)/c.dur.Seconds())
		} else {
			fmt.Fprintf(w, "| %s --recursive, %d skills | failed: %v |\n", c.command, o.corpus, c.err)
		}
	}
	for _, r := range rates {
		switch {
		case !r.present:
			fmt.Fprintf(w, "| /bin/true runs/s, %d in flight, %s | not installed |\n", o.conc, r.name)
		case r.err != nil:
			fmt.Fprintf(w, "| /bin/true runs/s, %d in flight, %s | failed: %v |\n", o.conc, r.name, r.err)
		default:
			fmt.Fprintf(w, "| /bin/true runs/s, %d in flight, %s (%d runs) | %.0f |\n", o.conc, r.name, total, r.perSec)
		}
	}
}
