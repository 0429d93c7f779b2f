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
// Every start it times runs in the same locale, LANG=C.UTF-8 and no LC_*
// variable (see sameLocale), the one skill-sandbox gives a script whose
// caller has none.
//
// Usage:
//
//	go run ./scripts/bench -bin ./bin/skill-sandbox [-n 200] [-corpus 10000] [-conc 8] [-settle 10ms]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
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
}

// kind is one script type whose start latency is measured.
type kind struct {
	label  string
	skill  string
	script string
	body   string // file content; empty means copy /bin/true
	interp string // interpreter for the bare run; "" runs the file itself
}

// latency is the result of one kind.
type latency struct {
	kind                   kind
	bare, sandboxed, bwrap []time.Duration // wall time per run
	library                []time.Duration // run.Sandbox.Run in this process
	pooled                 []time.Duration // the same with a run.Pool of 2
	libErr, poolErr        error
	// bareTree, sbTree and bwTree are the runs of the tree pass
	// (runTree): CPU time, and the time until the command returned and
	// until its whole process tree was gone.
	bareTree, sbTree, bwTree   []treeRun
	rssKB                      []int64 // supervisor's own peak RSS
	bareErr, sandboxErr, bwErr error
	rssErr                     error
	alts                       []bwrapAltRuns // the other bubblewrap configurations
}

func main() {
	// The library measurement (runLibrary) re-executes this binary as the
	// sandbox's init stage.
	run.ExecInitIfRequested()
	if len(os.Args) > 2 && os.Args[1] == reapArg {
		os.Exit(reapMain(os.Args[2:]))
	}
	os.Exit(mainErr(os.Args[1:], os.Stdout, os.Stderr))
}

func mainErr(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.bin, "bin", "./bin/skill-sandbox", "skill-sandbox binary")
	fs.IntVar(&o.n, "n", 200, "runs per latency measurement")
	fs.IntVar(&o.corpus, "corpus", 10000, "skills in the generated validate corpus")
	fs.IntVar(&o.conc, "conc", 8, "concurrent runs for the throughput measurement")
	fs.StringVar(&o.tmp, "tmp", "", "folder for the generated skills (default: next to -bin)")
	fs.DurationVar(&o.settle, "settle", 10*time.Millisecond, "pause before each timed start, for the kernel's teardown of the previous sandbox")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.n < 1 || o.conc < 1 || o.corpus < 1 {
		fmt.Fprintln(stderr, "bench: -n, -conc and -corpus must be positive")
		return 2
	}
	if err := sameLocale(); err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	bin, err := filepath.Abs(o.bin)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: binary: %v (run make build)\n", err)
		return 2
	}
	o.bin = bin
	if o.bwrap = findBwrap(); o.bwrap == "" {
		fmt.Fprintln(stderr, "bench: bwrap not installed (apt-get install bubblewrap): no comparison with bubblewrap")
	}
	if o.tmp == "" {
		// Next to the binary rather than in /tmp, which the sandbox may mask.
		o.tmp = filepath.Dir(bin)
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

	failed := false
	var results []latency
	for _, k := range kinds {
		fmt.Fprintf(stderr, "bench: start latency %s (%d runs each)...\n", k.label, o.n)
		r := measureLatency(o, base, k)
		for _, a := range r.alts {
			if a.err != nil {
				failed = true
				fmt.Fprintf(stderr, "bench: %s: bubblewrap (%s): %v\n", k.label, a.alt.name, a.err)
			}
		}
		if r.bareErr != nil || r.sandboxErr != nil || r.bwErr != nil || r.rssErr != nil || r.libErr != nil || r.poolErr != nil {
			failed = true
			fmt.Fprintf(stderr, "bench: %s: bare: %v; skill-sandbox: %v; bubblewrap: %v; supervisor memory: %v; library: %v; library with a pool: %v\n", k.label, r.bareErr, r.sandboxErr, r.bwErr, r.rssErr, r.libErr, r.poolErr)
		}
		results = append(results, r)
	}

	fmt.Fprintf(stderr, "bench: validate and scan a corpus of %d skills...\n", o.corpus)
	var valDur, scanDur time.Duration
	corpus, valErr := makeCorpus(o, base)
	scanErr := valErr
	if valErr == nil {
		valDur, valErr = measureCorpus(o, corpus, "validate")
		scanDur, scanErr = measureCorpus(o, corpus, "scan")
	}
	if valErr != nil || scanErr != nil {
		failed = true
		fmt.Fprintf(stderr, "bench: validate: %v; scan: %v\n", valErr, scanErr)
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

	printTable(stdout, o, results, []corpusRun{{"validate", valDur, valErr}, {"scan", scanDur, scanErr}}, total, rates)
	printAlts(stdout, results)
	printLibrary(stdout, results)
	printMCP(stdout, mcpRes)
	printProxy(stdout, prox)
	if failed {
		return 1
	}
	return 0
}

// makeSkill writes a one-script skill for k under base.
func makeSkill(base string, k kind) error {
	dir := filepath.Join(base, k.skill)
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		return err
	}
	md := "---\nname: " + k.skill + "\ndescription: Benchmark skill whose script does nothing. Use to time sandbox start-up.\n---\n# " + k.skill + "\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		return err
	}
	body := []byte(k.body)
	if k.body == "" {
		b, err := os.ReadFile("/bin/true")
		if err != nil {
			return err
		}
		body = b
	}
	return os.WriteFile(filepath.Join(dir, "scripts", k.script), body, 0o755)
}

// lookSystem finds name on systemPath.
func lookSystem(name string) (string, error) {
	for _, dir := range filepath.SplitList(systemPath) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", errors.New(name + " not found on " + systemPath)
}

// bareArgv is the command line that runs k's script without a sandbox.
func bareArgv(base string, k kind) ([]string, error) {
	script := filepath.Join(base, k.skill, "scripts", k.script)
	if k.interp == "" {
		return []string{script}, nil
	}
	p, err := lookSystem(k.interp)
	if err != nil {
		return nil, err
	}
	return []string{p, script}, nil
}

// runBare starts k's script without a sandbox and waits for it.
func runBare(base string, k kind) error {
	argv, err := bareArgv(base, k)
	if err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = filepath.Join(base, k.skill, "scripts")
	return cmd.Run()
}

// sandboxArgv is the command line that runs k's script in skill-sandbox.
func sandboxArgv(bin, base string, k kind) []string {
	return []string{bin, "run", filepath.Join(base, k.skill), k.script}
}

// runSandboxed runs k's script through `skill-sandbox run`.
func runSandboxed(bin, base string, k kind) error {
	argv := sandboxArgv(bin, base, k)
	cmd := exec.Command(argv[0], argv[1:]...)
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(errBuf.String()))
	}
	return nil
}

// measureLatency times o.n bare and o.n sandboxed starts of k, in rounds
// so that drift in the machine's load affects all alike.
// Bubblewrap, when installed, is timed in the same loop.
func measureLatency(o options, base string, k kind) latency {
	r := latency{kind: k}
	if o.bwrap != "" {
		for _, a := range bwrapAlts() {
			if a.seccomp && o.filter == "" {
				continue
			}
			r.alts = append(r.alts, bwrapAltRuns{alt: a})
		}
	}
	pool, err := run.NewPool(poolSize, 0, librarySandbox(base, k))
	if err != nil {
		r.poolErr = err
	} else {
		defer pool.Close()
	}
	for i := 0; i < 5; i++ { // warm the page cache
		runBare(base, k)
		runSandboxed(o.bin, base, k)
		if o.bwrap != "" {
			runBwrap(o.bwrap, base, k)
		}
		for _, a := range r.alts {
			runAlt(o.bwrap, base, o.filter, a.alt, k)
		}
		runLibrary(base, k, nil)
		if pool != nil {
			runLibrary(base, k, pool)
		}
	}
	timed := func(fn func() error, wall *[]time.Duration, first *error) {
		t := time.Now()
		err := fn()
		*wall = append(*wall, time.Since(t))
		if err != nil && *first == nil {
			*first = err
		}
	}
	// Each round runs every kind once, in a new random order, each after
	// a pause of o.settle: a sandbox's end leaves work to the kernel (a
	// network namespace is torn down by a kernel worker, a PID 1 may
	// still be exiting after its caller returned), which would otherwise
	// land on whichever start comes next, always the same one in a fixed
	// order.
	starts := []func(){
		func() { timed(func() error { return runBare(base, k) }, &r.bare, &r.bareErr) },
		func() { timed(func() error { return runSandboxed(o.bin, base, k) }, &r.sandboxed, &r.sandboxErr) },
		func() {
			d, err := runLibrary(base, k, nil)
			r.library = append(r.library, d)
			if err != nil && r.libErr == nil {
				r.libErr = err
			}
		},
	}
	if o.bwrap != "" {
		starts = append(starts, func() { timed(func() error { return runBwrap(o.bwrap, base, k) }, &r.bwrap, &r.bwErr) })
	}
	for i := range r.alts {
		a := &r.alts[i]
		starts = append(starts, func() { timed(func() error { return runAlt(o.bwrap, base, o.filter, a.alt, k) }, &a.wall, &a.err) })
	}
	if pool != nil {
		starts = append(starts, func() {
			d, err := runLibrary(base, k, pool)
			r.pooled = append(r.pooled, d)
			if err != nil && r.poolErr == nil {
				r.poolErr = err
			}
		})
	}
	for i := 0; i < o.n; i++ {
		rand.Shuffle(len(starts), func(a, b int) { starts[a], starts[b] = starts[b], starts[a] })
		for _, start := range starts {
			time.Sleep(o.settle)
			start()
		}
	}
	// CPU per run and the time until the whole tree is gone, in a
	// separate pass: each run goes through a reaping wrapper (runTree)
	// whose own start would add to the wall times above.
	bare, bareErr := bareArgv(base, k)
	var bw []string
	var bwErr error
	if o.bwrap != "" {
		bw, bwErr = bwrapArgv(o.bwrap, base, k)
	}
	if bareErr != nil && r.bareErr == nil {
		r.bareErr = bareErr
	}
	if bwErr != nil && r.bwErr == nil {
		r.bwErr = bwErr
	}
	tree := func(argv []string, out *[]treeRun, first *error) func() {
		return func() {
			t, err := runTree(argv)
			if err != nil {
				if *first == nil {
					*first = err
				}
				return
			}
			*out = append(*out, t)
		}
	}
	trees := []func(){tree(bare, &r.bareTree, &r.bareErr), tree(sandboxArgv(o.bin, base, k), &r.sbTree, &r.sandboxErr)}
	if bw != nil {
		trees = append(trees, tree(bw, &r.bwTree, &r.bwErr))
	}
	for i := range r.alts {
		a := &r.alts[i]
		argv, err := altArgv(o.bwrap, base, o.filter, a.alt, k)
		if err != nil {
			a.err = err
			continue
		}
		trees = append(trees, tree(argv, &a.tree, &a.err))
	}
	for i := 0; i < min(o.n, treeRuns) && bareErr == nil && bwErr == nil; i++ {
		rand.Shuffle(len(trees), func(a, b int) { trees[a], trees[b] = trees[b], trees[a] })
		for _, t := range trees {
			time.Sleep(o.settle)
			t()
		}
	}
	// The supervisor's own peak memory, in a separate pass: it is traced.
	for i := 0; i < min(o.n, 10); i++ {
		kb, err := supervisorPeakKB(o.bin, []string{"run", filepath.Join(base, k.skill), k.script})
		if err != nil {
			r.rssErr = err
			break
		}
		r.rssKB = append(r.rssKB, kb)
	}
	return r
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
