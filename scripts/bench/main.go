// Command bench measures skill-sandbox's costs and prints a Markdown table.
//
// It measures, in one run on one machine:
//   - start latency of a do-nothing script, sandboxed (`skill-sandbox run`)
//     and bare (the interpreter started directly), for python3, bash and an
//     executable (/bin/true copied into a skill's scripts/): median and p95
//     over -n runs each, and the ratio;
//   - the supervisor's peak RSS (the skill-sandbox process itself, from its
//     rusage; the sandboxed script's memory is accounted to its children);
//   - validate throughput over a generated corpus of -corpus skills;
//   - runs per second with -conc concurrent sandboxed runs.
//
// Usage:
//
//	go run ./scripts/bench -bin ./bin/skill-sandbox [-n 200] [-corpus 10000] [-conc 8]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// systemPath is where interpreters are looked up for the bare runs: the
// sandbox's fixed PATH, not the caller's.
const systemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// options are the command-line settings.
type options struct {
	bin    string
	n      int
	corpus int
	conc   int
	tmp    string
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
	kind                kind
	bare, sandboxed     []time.Duration
	rssKB               []int64 // supervisor peak RSS per sandboxed run
	bareErr, sandboxErr error
}

func main() {
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
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.n < 1 || o.conc < 1 || o.corpus < 1 {
		fmt.Fprintln(stderr, "bench: -n, -conc and -corpus must be positive")
		return 2
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
		if r.bareErr != nil || r.sandboxErr != nil {
			failed = true
			fmt.Fprintf(stderr, "bench: %s: bare: %v; sandboxed: %v\n", k.label, r.bareErr, r.sandboxErr)
		}
		results = append(results, r)
	}

	fmt.Fprintf(stderr, "bench: validate corpus of %d skills...\n", o.corpus)
	valDur, valErr := measureValidate(o, base)
	if valErr != nil {
		failed = true
		fmt.Fprintf(stderr, "bench: validate: %v\n", valErr)
	}

	fmt.Fprintf(stderr, "bench: %d concurrent runs...\n", o.conc)
	total := o.n
	if total < 4*o.conc {
		total = 4 * o.conc
	}
	py := kinds[0]
	bareRate, bareCErr := concurrentRate(o.conc, total, func() error { return runBare(base, py) })
	sbRate, sbCErr := concurrentRate(o.conc, total, func() error { _, err := runSandboxed(o.bin, base, py); return err })
	if bareCErr != nil || sbCErr != nil {
		failed = true
		fmt.Fprintf(stderr, "bench: concurrent: bare: %v; sandboxed: %v\n", bareCErr, sbCErr)
	}

	printTable(stdout, o, results, valDur, valErr, total, bareRate, sbRate)
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

// runBare starts k's script without a sandbox and waits for it.
func runBare(base string, k kind) error {
	script := filepath.Join(base, k.skill, "scripts", k.script)
	var cmd *exec.Cmd
	if k.interp == "" {
		cmd = exec.Command(script)
	} else {
		p, err := lookSystem(k.interp)
		if err != nil {
			return err
		}
		cmd = exec.Command(p, script)
	}
	cmd.Dir = filepath.Dir(script)
	return cmd.Run()
}

// runSandboxed runs k's script through `skill-sandbox run` and returns the
// supervisor's peak RSS in KiB.
func runSandboxed(bin, base string, k kind) (int64, error) {
	cmd := exec.Command(bin, "run", filepath.Join(base, k.skill), k.script)
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	err := cmd.Run()
	var rss int64
	if cmd.ProcessState != nil {
		rss = peakRSS(cmd.ProcessState)
	}
	if err != nil {
		return rss, fmt.Errorf("%w: %s", err, strings.TrimSpace(errBuf.String()))
	}
	return rss, nil
}

// measureLatency times o.n bare and o.n sandboxed starts of k, alternating
// so that drift in the machine's load affects both alike.
func measureLatency(o options, base string, k kind) latency {
	r := latency{kind: k}
	for i := 0; i < 5; i++ { // warm the page cache
		runBare(base, k)
		runSandboxed(o.bin, base, k)
	}
	for i := 0; i < o.n; i++ {
		t := time.Now()
		if err := runBare(base, k); err != nil && r.bareErr == nil {
			r.bareErr = err
		}
		r.bare = append(r.bare, time.Since(t))
		t = time.Now()
		rss, err := runSandboxed(o.bin, base, k)
		if err != nil && r.sandboxErr == nil {
			r.sandboxErr = err
		}
		r.sandboxed = append(r.sandboxed, time.Since(t))
		r.rssKB = append(r.rssKB, rss)
	}
	return r
}

// measureValidate generates the corpus and times `validate --recursive`
// over it three times, returning the median.
func measureValidate(o options, base string) (time.Duration, error) {
	dir := filepath.Join(base, "corpus")
	for i := 0; i < o.corpus; i++ {
		name := fmt.Sprintf("corpus-skill-%05d", i)
		sd := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(sd, "scripts"), 0o755); err != nil {
			return 0, err
		}
		md := fmt.Sprintf("---\nname: %s\ndescription: >-\n  Generated benchmark skill %d. Formats reports and\n  checks their tables. Use when asked for report %d.\nlicense: MIT\nmetadata:\n  author: bench\n  version: \"1.%d\"\n---\n# Skill %d\n\nRun `scripts/run.py` on the input.\n", name, i, i, i%10, i)
		if err := os.WriteFile(filepath.Join(sd, "SKILL.md"), []byte(md), 0o644); err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(sd, "scripts", "run.py"), []byte("print('ok')\n"), 0o755); err != nil {
			return 0, err
		}
	}
	var times []time.Duration
	for i := 0; i < 3; i++ {
		cmd := exec.Command(o.bin, "validate", "--recursive", dir)
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

func printTable(w io.Writer, o options, results []latency, valDur time.Duration, valErr error, total int, bareRate, sbRate float64) {
	fmt.Fprintf(w, "Machine: %s. %s UTC.\n\n", machine(), time.Now().UTC().Format("2006-01-02 15:04"))
	fmt.Fprintln(w, "| measurement | bare | sandboxed | overhead | ratio |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, r := range results {
		for _, q := range []struct {
			name string
			q    float64
		}{{"median", 0.5}, {"p95", 0.95}} {
			b, s := quantile(r.bare, q.q), quantile(r.sandboxed, q.q)
			fmt.Fprintf(w, "| start %s, %s of %d | %s | %s | %s | %.1f× |\n", r.kind.label, q.name, len(r.bare), ms(b), ms(s), ms(s-b), float64(s)/float64(b))
		}
	}
	var rss []time.Duration // reuse quantile on KiB values
	var maxRSS int64
	for _, r := range results {
		for _, k := range r.rssKB {
			rss = append(rss, time.Duration(k))
			if k > maxRSS {
				maxRSS = k
			}
		}
	}
	fmt.Fprintf(w, "| supervisor peak RSS (median / max of %d runs) | | %.1f / %.1f MiB | | |\n", len(rss), float64(quantile(rss, 0.5))/1024, float64(maxRSS)/1024)
	if valErr == nil {
		fmt.Fprintf(w, "| validate --recursive, %d skills (median of 3) | | %.2f s = %.0f skills/s | | |\n", o.corpus, valDur.Seconds(), float64(o.corpus)/valDur.Seconds())
	} else {
		fmt.Fprintf(w, "| validate --recursive, %d skills | | failed: %v | | |\n", o.corpus, valErr)
	}
	fmt.Fprintf(w, "| python3 runs/s, %d concurrent (%d runs) | %.0f | %.0f | | %.1f× |\n", o.conc, total, bareRate, sbRate, bareRate/sbRate)
}
