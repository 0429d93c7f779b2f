package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"strings"
	"time"
)

// backendRunner is one way to start k's script in the -backends
// comparison.
type backendRunner struct {
	name string
	run  func() error
}

// backendRunners are the ways -backends compares: bare, skill-sandbox
// run with each backend, and bubblewrap when installed. runsc missing
// leaves gvisor out, said on stderr.
func backendRunners(o options, base string, k kind, stderr io.Writer) []backendRunner {
	rs := []backendRunner{
		{"bare", func() error { return runBare(base, k) }},
		{"skill-sandbox --backend native", func() error { return runBackend(o.bin, base, k, "native") }},
	}
	if _, err := exec.LookPath("runsc"); err == nil {
		rs = append(rs, backendRunner{"skill-sandbox --backend gvisor", func() error { return runBackend(o.bin, base, k, "gvisor") }})
	} else {
		fmt.Fprintln(stderr, "bench: runsc not installed (apt-get install runsc): no gvisor backend")
	}
	if o.bwrap != "" {
		rs = append(rs, backendRunner{"bubblewrap", func() error { return runBwrap(o.bwrap, base, k) }})
	}
	return rs
}

// runBackend runs k's script through skill-sandbox run --backend b.
func runBackend(bin, base string, k kind, b string) error {
	argv := sandboxArgv(bin, base, k)
	return runArgv(append(argv[:2:2], append([]string{"--backend", b}, argv[2:]...)...))
}

// backendResult is one runner's figures.
type backendResult struct {
	name  string
	walls []time.Duration
	rate  float64 // runs/s with o.conc in flight
	err   error
}

// measureBackends times o.n starts of k with each runner, in rounds of
// one start each in random order with o.settle before each, then each
// runner's runs/s with o.conc in flight, and prints the table with the
// machine's load before and after.
func measureBackends(o options, base string, k kind, w, stderr io.Writer) bool {
	before := loadavg()
	rs := backendRunners(o, base, k, stderr)
	res := make([]backendResult, len(rs))
	for i, r := range rs {
		res[i].name = r.name
	}
	fmt.Fprintf(stderr, "bench: %s start, %d rounds over %d runners...\n", k.label, o.n, len(rs))
	for range o.n {
		for _, i := range rand.Perm(len(rs)) {
			time.Sleep(o.settle)
			timed(rs[i].run, &res[i].walls, &res[i].err)
		}
	}
	total := max(o.n, 4*o.conc)
	for i, r := range rs {
		fmt.Fprintf(stderr, "bench: %s, %d runs with %d in flight...\n", r.name, total, o.conc)
		rate, err := concurrentRate(o.conc, total, r.run)
		res[i].rate = rate
		if res[i].err == nil {
			res[i].err = err
		}
	}
	after := loadavg()
	fmt.Fprintf(w, "## Backends: %s start and runs/s\n\n", k.label)
	fmt.Fprintf(w, "%s; %d starts each in random order (%v settle), then %d runs with %d in flight; load average before %s, after %s; %s\n\n",
		machine(), o.n, o.settle, total, o.conc, before, after, runscVersion())
	fmt.Fprintln(w, "| runner | median | p95 | overhead (median - bare) | runs/s |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	bare := quantile(res[0].walls, 0.5)
	ok := true
	for _, r := range res {
		if r.err != nil {
			ok = false
			fmt.Fprintf(stderr, "bench: %s: %v\n", r.name, r.err)
		}
		med := quantile(r.walls, 0.5)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.0f |\n", r.name, ms(med), ms(quantile(r.walls, 0.95)), ms(med-bare), r.rate)
	}
	return ok
}

// runscVersion is runsc's version line, or "no runsc".
func runscVersion() string {
	out, err := exec.Command("runsc", "--version").Output()
	if err != nil {
		return "no runsc"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}
