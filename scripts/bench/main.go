// Command bench measures skill-sandbox's costs and prints a Markdown table.
//
// It measures, in one run on one machine:
//   - start latency of a do-nothing script, bare (the interpreter started
//     directly), in skill-sandbox (`skill-sandbox run`) and, when bwrap is
//     installed (apt-get install bubblewrap), in bubblewrap with the
//     configuration of bwrapArgs (and those of bwrapAlts: a minimal one
//     and one with a seccomp filter), in rounds of one start each in random
//     order with -settle before each (see measureLatency), for python3,
//     bash and an executable (/bin/true copied into a skill's scripts/):
//     median and p95
//     over -n runs each, the overheads and their ratio; in the same loop,
//     the library call (run.Sandbox.Run in this process, see runLibrary);
//   - CPU per run of each, and the time until the command returns and
//     until its whole process tree is gone (through a reaping wrapper:
//     see runTree);
//   - the supervisor's own peak RSS (VmHWM of the skill-sandbox process,
//     read while it is stopped at exit: see supervisorPeakKB);
//   - validate and scan throughput over a generated corpus of -corpus skills;
//   - /bin/true runs per second with -conc in flight: bare, skill-sandbox
//     and bubblewrap;
//   - one run of /bin/true as a `tools/call` through a running
//     `skill-sandbox mcp`, against the CLI, alternating in one loop;
//   - the latency the host allowlist adds to one HTTPS request (curl in
//     the sandbox to a server on 127.0.0.1) through the filtering proxy,
//     against the same request with --allow-network.
//
// With -download N it measures only, in N rounds, a 100 MB download and
// small requests over plain HTTP from a server on 127.0.0.1, by curl on
// the host, in the sandbox with --allow-network and through the filtering
// proxy with --allow-host (download.go).
//
// With -backends it measures only a bash script's start latency and runs/s
// bare, with skill-sandbox's native and gvisor backends and under
// bubblewrap, in one loop (backends.go).
//
// Every start it times runs in the same locale, LANG=C.UTF-8 and no LC_*
// variable (see sameLocale), the one skill-sandbox gives a script whose
// caller has none.
//
// Usage:
//
//	go run ./scripts/bench -bin ./bin/skill-sandbox [-n 200] [-corpus 10000] [-conc 8] [-settle 10ms] [-backends] [-download N]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// systemPath is where interpreters are looked up for the bare runs: the
// sandbox's fixed PATH, not the caller's.
const systemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// options are the command-line settings.
type options struct {
	bin    string
	bwrap  string // bubblewrap binary, "" when not installed
	filter string // the seccomp program for bwrap --seccomp, "" when none
	n      int
	corpus int
	conc   int
	tmp    string
	settle time.Duration // pause before each timed start (see measureLatency)
	// backends, when set, measures only the backends: a bash script's start
	// and runs/s bare, with each skill-sandbox backend and bubblewrap
	// (backends.go).
	backends bool
	// download, when positive, measures only a large download and small
	// requests bare, with --allow-network and through the proxy, in
	// that many rounds (download.go).
	download int
}

// kind is one script type whose start latency is measured.
type kind struct {
	label  string
	skill  string
	script string
	body   string // file content; empty means copy /bin/true
	interp string // interpreter for the bare run; "" runs the file itself
}

func main() {
	// The library measurement (runLibrary) re-executes this binary as the
	// sandbox's init process.
	run.ExecInitIfRequested()
	if len(os.Args) > 2 && os.Args[1] == reapArg {
		os.Exit(reapMain(os.Args[2:]))
	}
	os.Exit(mainErr(os.Args[1:], os.Stdout, os.Stderr))
}

// mainErr runs every measurement, prints the tables and returns the exit
// status: 1 when a measurement failed.
func mainErr(args []string, stdout, stderr io.Writer) int {
	o, code := parseOptions(args, stderr)
	if code != 0 {
		return code
	}
	base, err := os.MkdirTemp(o.tmp, "bench-")
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(base)
	// When the caller is root the sandbox runs as another identity, which
	// must be able to reach the skills.
	if err := os.Chmod(base, 0o755); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}

	if o.bwrap != "" {
		if o.filter, err = writeFilter(base); err != nil {
			fmt.Fprintf(stderr, "bench: no bubblewrap with a seccomp filter: %v\n", err)
		}
	}

	kinds := []kind{
		{label: "python3", skill: "bench-python", script: "noop.py", body: "pass\n", interp: "python3"},
		{label: "bash", skill: "bench-bash", script: "noop.sh", body: "exit 0\n", interp: "bash"},
		{label: "/bin/true", skill: "bench-true", script: "true"},
	}
	for _, k := range kinds {
		if err := makeSkill(base, k); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
	}
	if o.download > 0 {
		fmt.Fprintf(stderr, "bench: a 100 MB download and %d small requests bare, --allow-network and --allow-host (%d rounds)...\n", smallRequests, o.download)
		r := measureDownload(o, base, o.download)
		printDownload(stdout, r)
		if r.err != nil {
			return 1
		}
		return 0
	}
	if o.backends {
		// bash: the gvisor backend cannot yet execute a binary in the
		// skill folder directly (it is mounted noexec there).
		if !measureBackends(o, base, kinds[1], stdout, stderr) {
			return 1
		}
		return 0
	}

	results, ok := measureStarts(o, base, kinds, stderr)
	failed := !ok
	corpora, ok := measureCorpora(o, base, stderr)
	if !ok {
		failed = true
	}

	trueKind := kinds[2]
	fmt.Fprintf(stderr, "bench: %s with %d in flight...\n", trueKind.label, o.conc)
	total := o.n
	if total < 4*o.conc {
		total = 4 * o.conc
	}
	rates := concurrentRates(o, total, base, trueKind)
	for _, r := range rates {
		if r.err != nil {
			failed = true
			fmt.Fprintf(stderr, "bench: concurrent %s: %v\n", r.name, r.err)
		}
	}

	fmt.Fprintf(stderr, "bench: %s through skill-sandbox mcp (%d runs each)...\n", trueKind.label, o.n)
	mcpRes := measureMCP(o, base, trueKind)
	if mcpRes.err != nil {
		failed = true
		fmt.Fprintf(stderr, "bench: mcp: %v\n", mcpRes.err)
	}

	proxyRuns := min(o.n, 30)
	fmt.Fprintf(stderr, "bench: one HTTPS request through the allowlist proxy vs --allow-network (%d runs each)...\n", proxyRuns)
	prox := measureProxy(o, base, proxyRuns)
	if prox.err != nil {
		failed = true
		fmt.Fprintf(stderr, "bench: proxy: %v\n", prox.err)
	}

	printTable(stdout, o, results, corpora, total, rates)
	printAlts(stdout, results)
	printLibrary(stdout, results)
	printMCP(stdout, mcpRes)
	printProxy(stdout, prox)
	if failed {
		return 1
	}
	return 0
}

// parseOptions reads the command line and checks the binary and the
// locale; it returns the exit status, 0 when the bench can go on.
func parseOptions(args []string, stderr io.Writer) (options, int) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.bin, "bin", "./bin/skill-sandbox", "skill-sandbox binary")
	fs.IntVar(&o.n, "n", 200, "runs per latency measurement")
	fs.IntVar(&o.corpus, "corpus", 10000, "skills in the generated validate corpus")
	fs.IntVar(&o.conc, "conc", 8, "concurrent runs for the throughput measurement")
	fs.StringVar(&o.tmp, "tmp", "", "folder for the generated skills (default: next to -bin)")
	fs.DurationVar(&o.settle, "settle", 10*time.Millisecond, "pause before each timed start, for the kernel's teardown of the previous sandbox")
	fs.IntVar(&o.download, "download", 0, "measure only, in `N` rounds, a 100 MB download and small requests from curl: bare, --allow-network and --allow-host (the proxy)")
	fs.BoolVar(&o.backends, "backends", false, "measure only a bash script's start and runs/s bare, with --backend native and gvisor, and under bubblewrap")
	if err := fs.Parse(args); err != nil {
		return o, 2
	}
	if o.n < 1 || o.conc < 1 || o.corpus < 1 {
		fmt.Fprintln(stderr, "bench: -n, -conc and -corpus must be positive")
		return o, 2
	}
	if err := sameLocale(); err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return o, 1
	}
	bin, err := filepath.Abs(o.bin)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: binary: %v (run make build)\n", err)
		return o, 2
	}
	o.bin = bin
	if o.bwrap = findBwrap(); o.bwrap == "" {
		fmt.Fprintln(stderr, "bench: bwrap not installed (apt-get install bubblewrap): no comparison with bubblewrap")
	}
	if o.tmp == "" {
		// Next to the binary rather than in /tmp, which the sandbox may mask.
		o.tmp = filepath.Dir(bin)
	}
	return o, 0
}

// concurrentRate runs fn total times on conc workers and returns runs/s.
func concurrentRate(conc, total int, fn func() error) (float64, error) {
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil && next.Add(1) <= int64(total) {
				if err := fn(); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return float64(total) / time.Since(start).Seconds(), firstErr
}
