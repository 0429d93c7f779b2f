package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// runLibrary runs k's script with run.Sandbox.Run in this process, as a
// long-lived caller (the MCP server, an agent embedding the package) does:
// no process start of its own, and Run returns once the result is
// complete. It returns the time Run took; the sandbox's teardown, which
// such a caller does not wait for, is waited for afterwards, untimed, so
// that it does not pile up across runs.
func runLibrary(base string, k kind) (time.Duration, error) {
	sb := &run.Sandbox{SkillDir: filepath.Join(base, k.skill), Stdout: io.Discard, Stderr: io.Discard}
	t := time.Now()
	res, err := sb.Run(context.Background(), k.script, nil)
	d := time.Since(t)
	res.WaitCleanup()
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("library run: exit %d", res.ExitCode)
	}
	return d, err
}

// printLibrary prints the library call's start overhead beside
// bubblewrap's, from the same alternating loop as printTable's.
func printLibrary(w io.Writer, results []latency) {
	fmt.Fprint(w, "\nThe same start through the library (run.Sandbox.Run in the bench's own process, timed until Run returns), in the same loop:\n\n")
	fmt.Fprintln(w, "| program | quantile | library | library overhead | bubblewrap overhead | ratio of overheads |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|")
	for _, r := range results {
		for _, q := range []struct {
			name string
			q    float64
		}{{"median", 0.5}, {"p95", 0.95}} {
			if len(r.library) == 0 {
				continue
			}
			b, l := quantile(r.bare, q.q), quantile(r.library, q.q)
			bwOver, ratio := "–", "–"
			if len(r.bwrap) > 0 {
				bwq := quantile(r.bwrap, q.q)
				bwOver = ms(bwq - b)
				ratio = fmt.Sprintf("%.2f", float64(l-b)/float64(bwq-b))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.kind.label, q.name, ms(l), ms(l-b), bwOver, ratio)
		}
	}
}
