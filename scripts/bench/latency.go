package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

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

// measureStarts measures the start latency of each kind and reports
// whether every measurement succeeded.
func measureStarts(o options, base string, kinds []kind, stderr io.Writer) ([]latency, bool) {
	ok := true
	var results []latency
	for _, k := range kinds {
		fmt.Fprintf(stderr, "bench: start latency %s (%d runs each)...\n", k.label, o.n)
		r := measureLatency(o, base, k)
		for _, a := range r.alts {
			if a.err != nil {
				ok = false
				fmt.Fprintf(stderr, "bench: %s: bubblewrap (%s): %v\n", k.label, a.alt.name, a.err)
			}
		}
		if r.bareErr != nil || r.sandboxErr != nil || r.bwErr != nil || r.rssErr != nil || r.libErr != nil || r.poolErr != nil {
			ok = false
			fmt.Fprintf(stderr, "bench: %s: bare: %v; skill-sandbox: %v; bubblewrap: %v; supervisor memory: %v; library: %v; library with a pool: %v\n", k.label, r.bareErr, r.sandboxErr, r.bwErr, r.rssErr, r.libErr, r.poolErr)
		}
		results = append(results, r)
	}
	return results, ok
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
	// Each round runs every kind once, in a new random order, each after
	// a pause of o.settle: a sandbox's end leaves work to the kernel (a
	// network namespace is torn down by a kernel worker, the sandbox's
	// init process may still be exiting after its caller returned), which
	// would otherwise land on whichever start comes next, always the same
	// one in a fixed order.
	starts := latencyStarts(o, base, k, &r, pool)
	for i := 0; i < o.n; i++ {
		rand.Shuffle(len(starts), func(a, b int) { starts[a], starts[b] = starts[b], starts[a] })
		for _, start := range starts {
			time.Sleep(o.settle)
			start()
		}
	}
	measureTrees(o, base, k, &r)
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

// timed runs fn, appends its wall time to wall and keeps its error in
// first unless one is there already.
func timed(fn func() error, wall *[]time.Duration, first *error) {
	t := time.Now()
	err := fn()
	*wall = append(*wall, time.Since(t))
	if err != nil && *first == nil {
		*first = err
	}
}

// latencyStarts returns one timed start of k per configuration (bare,
// skill-sandbox, the library, bubblewrap and its alternatives, the pool
// when there is one), each recording into r.
func latencyStarts(o options, base string, k kind, r *latency, pool *run.Pool) []func() {
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
	return starts
}

// measureTrees measures CPU per run and the time until the whole tree is
// gone, in a pass of its own: each run goes through a reaping wrapper
// (runTree) whose own start would add to the wall times of the starts.
func measureTrees(o options, base string, k kind, r *latency) {
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
	return runArgv(sandboxArgv(bin, base, k))
}

// runArgv runs argv, its error carrying what it printed on stderr.
func runArgv(argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(errBuf.String()))
	}
	return nil
}
