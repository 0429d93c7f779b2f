// Command servesim runs several "skill-sandbox serve" replicas on
// loopback ports behind a real nginx, scraped by a real Prometheus
// server, sends them a bounded load of runs, kills one replica (SIGKILL)
// and stops another (SIGTERM) midway, and checks that every run a client
// was told succeeded has its audit record, and that every other run's
// failure reached its client (docs/kubernetes.md, "Several replicas").
//
//	go run ./scripts/servesim -bin ./bin/skill-sandbox [-replicas 3] [-runs 120] [-clients 12]
//
// Everything listens on 127.0.0.1 only, in a temporary folder removed at
// the end; nginx and Prometheus are Debian's (apt-get install nginx
// prometheus). make serve-sim runs it.
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// options are the command line's.
type options struct {
	bin, skill, script  string
	replicas, runs, cli int
	timeout             time.Duration
	keep                bool
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("servesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.bin, "bin", "bin/skill-sandbox", "the skill-sandbox binary")
	fs.StringVar(&o.skill, "skill", "testdata/example/word-stats", "the skill the runs run")
	fs.StringVar(&o.script, "script", "stats.py", "its script")
	fs.IntVar(&o.replicas, "replicas", 3, "serve replicas (at least 3: one is killed, one stopped)")
	fs.IntVar(&o.runs, "runs", 120, "runs sent in all")
	fs.IntVar(&o.cli, "clients", 12, "clients sending at once")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "the whole simulation's limit")
	fs.BoolVar(&o.keep, "keep", false, "keep the temporary folder (logs, audit records)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.replicas < 3 || o.runs < 3 || o.cli < 1 || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "servesim: want -replicas >= 3, -runs >= 3, -clients >= 1 and no arguments")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	rep, err := simulate(ctx, o, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "servesim: %v\n", err)
		return 1
	}
	rep.print(stdout)
	if len(rep.problems) > 0 {
		return 1
	}
	return 0
}

// simulate sets up the replicas, nginx and Prometheus, runs the load and
// returns the report.
func simulate(ctx context.Context, o options, log io.Writer) (*report, error) {
	for _, tool := range []string{"nginx", "prometheus"} {
		if _, err := lookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is not installed (Debian: apt-get install %s)", tool, tool)
		}
	}
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return nil, err
	}
	skill, err := filepath.Abs(o.skill)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "servesim-")
	if err != nil {
		return nil, err
	}
	if o.keep {
		fmt.Fprintf(log, "servesim: keeping %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	var procs processes
	defer procs.stopAll()
	token, err := writeTokens(ctx, dir, bin, filepath.Dir(skill))
	if err != nil {
		return nil, err
	}
	reps, err := startReplicas(ctx, &procs, dir, bin, o.replicas)
	if err != nil {
		return nil, err
	}
	lb, err := startNginx(ctx, &procs, dir, reps)
	if err != nil {
		return nil, err
	}
	prom, err := startPrometheus(ctx, &procs, dir, reps, token)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "servesim: %d replicas, nginx on %s, Prometheus on %s\n", len(reps), lb, prom)
	l := load{url: "http://" + lb, token: token, skill: filepath.Base(skill), script: o.script}
	rep := &report{options: o}
	rep.results, rep.elapsed = l.send(ctx, o.runs, o.cli, func(done int) {
		switch done {
		case o.runs / 3:
			rep.killed = reps[0].kill(syscall.SIGKILL)
		case 2 * o.runs / 3:
			rep.stopped = reps[1].kill(syscall.SIGTERM)
		}
	})
	// Let Prometheus scrape the end state, then stop every replica so
	// their audit logs are complete.
	time.Sleep(3 * time.Second)
	rep.metrics, err = queryMetrics(ctx, prom)
	if err != nil {
		rep.problems = append(rep.problems, "Prometheus: "+err.Error())
	}
	for _, r := range reps {
		r.kill(syscall.SIGTERM)
	}
	procs.waitReplicas(30 * time.Second)
	rep.reconcile(reps)
	return rep, nil
}

// writeTokens writes the tokens file and the tenant's policy and returns
// the bearer token; the hash is the one "serve hash-token" prints.
func writeTokens(ctx context.Context, dir, bin, skills string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b)
	cmd := exec.CommandContext(ctx, bin, "serve", "hash-token")
	cmd.Stdin = strings.NewReader(token + "\n")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s serve hash-token: %w", bin, err)
	}
	hash := strings.TrimSpace(string(out))
	if sum := sha256.Sum256([]byte(token)); hash != hex.EncodeToString(sum[:]) {
		return "", fmt.Errorf("serve hash-token printed %q, not the SHA-256 of the token", hash)
	}
	policy := filepath.Join(dir, "sim.toml")
	if err := os.WriteFile(policy, []byte("[resources]\ntimeout = \"60s\"\n"), 0o600); err != nil {
		return "", err
	}
	tokens := fmt.Sprintf(`{"tokens":[{"id":"sim-1","sha256":%q,"tenant":"sim","skills":[%q],"policy":%q}]}`, hash, skills, policy)
	return token, os.WriteFile(filepath.Join(dir, "tokens.json"), []byte(tokens), 0o600)
}

// lookPath finds a program on PATH or in /usr/sbin (nginx's place, not on
// every user's PATH).
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err != nil {
		return "", errors.New(name + " not found")
	}
	return p, nil
}
