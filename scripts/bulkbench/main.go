// Command bulkbench measures how many skills a second "skill-sandbox
// validate --recursive" and "scan --recursive" check on a generated corpus
// of realistic skills (internal/skillcorpus: 2-8 KB SKILL.md, 1-3 scripts
// of a few KB), the CPU time and the peak memory of each call.
//
//	go run ./scripts/bulkbench -bin ./bin/skill-sandbox[,OTHER] [-n 2000] [-runs 5]
//
// Several binaries (comma-separated) are measured in one interleaved loop,
// so that a before/after comparison sees the same machine state. Each
// figure is the median of -runs calls; the machine's load average is
// printed with the results (docs/bench.md).
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/skillcorpus"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// sample is one call's wall time, CPU time (user and system) and peak
// RSS.
type sample struct {
	wall, cpu time.Duration
	rssKB     int64
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bulkbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bins := fs.String("bin", "./bin/skill-sandbox", "comma-separated skill-sandbox binaries to measure")
	n := fs.Int("n", 2000, "skills in the corpus")
	runs := fs.Int("runs", 5, "calls per binary and command (the median is reported)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *n < 1 || *runs < 1 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "bulkbench: -n and -runs must be positive; no arguments")
		return 2
	}
	root, err := os.MkdirTemp("", "bulkbench-")
	if err != nil {
		fmt.Fprintf(stderr, "bulkbench: %v\n", err)
		return 1
	}
	defer os.RemoveAll(root)
	if _, err := skillcorpus.Write(root, *n); err != nil {
		fmt.Fprintf(stderr, "bulkbench: %v\n", err)
		return 1
	}
	binList := strings.Split(*bins, ",")
	commands := []string{"validate", "scan"}
	samples := map[string][]sample{}
	for range *runs {
		for _, bin := range binList {
			for _, cmd := range commands {
				s, err := measure(bin, cmd, root)
				if err != nil {
					fmt.Fprintf(stderr, "bulkbench: %s %s: %v\n", bin, cmd, err)
					return 1
				}
				samples[bin+" "+cmd] = append(samples[bin+" "+cmd], s)
			}
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(stdout, "%d skills, median of %d calls; load average %s\n", *n, *runs, strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	fmt.Fprintln(stdout, "| binary | command | wall | skills/s | CPU | peak RSS |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|")
	for _, bin := range binList {
		for _, cmd := range commands {
			ss := samples[bin+" "+cmd]
			walls := make([]time.Duration, len(ss))
			cpus := make([]time.Duration, len(ss))
			var rss int64
			for i, s := range ss {
				walls[i], cpus[i] = s.wall, s.cpu
				rss = max(rss, s.rssKB)
			}
			slices.Sort(walls)
			slices.Sort(cpus)
			med, cpu := walls[len(walls)/2], cpus[len(cpus)/2]
			fmt.Fprintf(stdout, "| %s | %s --recursive | %.0f ms | %.0f | %.0f ms | %.1f MiB |\n", bin, cmd, float64(med.Microseconds())/1000, float64(*n)/med.Seconds(), float64(cpu.Microseconds())/1000, float64(rss)/1024)
		}
	}
	return 0
}

// measure runs "bin cmd --recursive root" once. validate exits 1 (a tenth
// of the corpus is invalid by design); scan must exit 0 (the corpus has
// info findings only).
func measure(bin, cmd, root string) (sample, error) {
	c := exec.Command(bin, cmd, "--recursive", root)
	var errBuf bytes.Buffer
	c.Stdout = io.Discard
	c.Stderr = &errBuf
	start := time.Now()
	err := c.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !(cmd == "validate" && errors.As(err, &exit) && exit.ExitCode() == 1) {
		return sample{}, fmt.Errorf("%w: %s", err, strings.TrimSpace(errBuf.String()))
	}
	rss := peakRSSKB(c.ProcessState)
	cpu := c.ProcessState.UserTime() + c.ProcessState.SystemTime()
	return sample{wall: wall, cpu: cpu, rssKB: rss}, nil
}
