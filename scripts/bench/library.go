package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// librarySandbox is the sandbox the library runs of k use.
func librarySandbox(base string, k kind) run.Sandbox {
	return run.Sandbox{SkillDir: filepath.Join(base, k.skill), Stdout: io.Discard, Stderr: io.Discard}
}

// runLibrary runs k's script with run.Sandbox.Run in this process, as a
// long-lived caller (the MCP server, an agent embedding the package) does:
// no process start of its own, and Run returns once the result is
// complete. With a pool, the run takes an init process started ahead of it
// (the work is moved ahead of the call, not removed). It returns the time
// Run took; the sandbox's teardown, which such a caller does not wait
// for, and the pool's refill, which starts once the run is done, are
// waited for afterwards, untimed, so that neither piles up across runs
// nor runs into the loop's other measurements.
func runLibrary(base string, k kind, pool *run.Pool) (time.Duration, error) {
	sb := librarySandbox(base, k)
	sb.Pool = pool
	t := time.Now()
	res, err := sb.Run(context.Background(), k.script, nil)
	d := time.Since(t)
	res.WaitCleanup()
	waitRefilled(pool)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("library run: exit %d", res.ExitCode)
	}
	return d, err
}

// printLibrary prints the library call's start overhead beside
// bubblewrap's, from the same alternating loop as printTable's.
func printLibrary(w io.Writer, results []latency) {
	fmt.Fprint(w, "\nThe same start through the library (run.Sandbox.Run in the bench's own process, timed until Run returns), in the same loop; \"pooled\" takes an init process a run.Pool of 2 started ahead (which refills once the run is done, untimed, before the loop goes on):\n\n")
	fmt.Fprintln(w, "| program | quantile | library | library overhead | pooled overhead | bubblewrap overhead | ratio of overheads | pooled ratio |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		for _, q := range shownQuantiles() {
			if len(r.library) == 0 {
				continue
			}
			b, l := quantile(r.bare, q.q), quantile(r.library, q.q)
			poolOver, bwOver, ratio, poolRatio := "–", "–", "–", "–"
			var p time.Duration
			if len(r.pooled) > 0 {
				p = quantile(r.pooled, q.q)
				poolOver = ms(p - b)
			}
			if len(r.bwrap) > 0 {
				bwq := quantile(r.bwrap, q.q)
				bwOver = ms(bwq - b)
				ratio = ratioText(l-b, bwq-b)
				if len(r.pooled) > 0 {
					poolRatio = ratioText(p-b, bwq-b)
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.kind.label, q.name, ms(l), ms(l-b), poolOver, bwOver, ratio, poolRatio)
		}
	}
}

// poolSize is the size of the bench's pools.
const poolSize = 2

// waitRefilled waits (at most a second) until pool has poolSize stages
// waiting again; nil waits for nothing.
func waitRefilled(pool *run.Pool) {
	if pool == nil {
		return
	}
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		st := pool.Stats()
		if st.Started-st.Taken-st.Expired-st.Died >= poolSize {
			return
		}
		time.Sleep(200 * time.Microsecond)
	}
}
