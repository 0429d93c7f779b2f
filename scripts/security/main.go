//go:build linux

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// config holds the command-line settings of one invocation.
type config struct {
	bin        string
	root       string // repository root (holds testdata/)
	suite      string
	jsonOut    string
	only       map[int]bool
	noBaseline bool
	ablate     bool
	unpriv     bool
	noUserNS   bool     // when root, also run without user namespaces (nouserns.go)
	forbidNS   bool     // this process is the no-userns pass: forbid them first
	extraFlags []string // added to every sandboxed invocation (--allow-degraded, --backend)
	backend    string   // -backend: native or gvisor (gvisor.go)
	verbose    bool
	tmpBase    string
	home       string
}

// report is what -json writes.
type report struct {
	Generated     string        `json:"generated"`
	Bin           string        `json:"bin"`
	UID           int           `json:"uid"`
	Kernel        string        `json:"kernel"`
	GoVersion     string        `json:"go_version"`
	LayersApplied []string      `json:"layers_applied"`
	LayersMissing []string      `json:"layers_missing"`
	Probes        []probeReport `json:"probes,omitempty"`
	UnprivSkipped string        `json:"unprivileged_skipped,omitempty"`
	// Backend is what ran the sandboxed probes (-backend); Skipped are
	// the probes that could not run on it, each with the reason.
	Backend string   `json:"backend"`
	Skipped []string `json:"skipped,omitempty"`
	// KnownGaps are the probes the gvisor backend is known not to stop
	// yet (gvisorGaps), each with why; they fail nothing.
	KnownGaps []string `json:"known_gaps,omitempty"`
	// AblationSkipped says why no ablation ran (-backend gvisor).
	AblationSkipped string          `json:"ablation_skipped,omitempty"`
	Score           int             `json:"score"`
	Total           int             `json:"total"`
	Failures        []string        `json:"failures"`
	Usability       []usabilityCase `json:"usability,omitempty"`
	// The pass without user namespaces (nouserns.go).
	NoUserNSSkipped string `json:"no_userns_skipped,omitempty"`
	Refusal         string `json:"no_userns_refusal,omitempty"`
}

func main() {
	// The ablation runs use the run package in-process; its sandbox
	// re-executes this binary as the init process.
	run.ExecInitIfRequested()
	os.Exit(mainErr(os.Args[1:], os.Stdout, os.Stderr))
}

// mainErr runs the suites the flags select and returns the exit status.
func mainErr(args []string, stdout, stderr io.Writer) int {
	cfg, code := parseFlags(args, stderr)
	if cfg == nil {
		return code
	}
	if code := resolvePaths(cfg, stderr); code != 0 {
		return code
	}
	rep := report{
		Generated: time.Now().UTC().Format(time.RFC3339),
		Bin:       cfg.bin,
		UID:       os.Getuid(),
		Kernel:    kernelRelease(),
		GoVersion: runtime.Version(),
		Failures:  []string{},
		Backend:   cfg.backend,
	}
	rep.AblationSkipped = ablationSkipped(cfg)
	start := time.Now()
	switch cfg.suite {
	case "all", "security", "usability":
	default:
		fmt.Fprintf(stderr, "security: -suite must be all, security or usability\n")
		return 2
	}
	failed := !runSuites(cfg, &rep, stdout, stderr)
	if len(rep.KnownGaps) > 0 {
		fmt.Fprintf(stdout, "known gaps of the %s backend (docs/backends.md): %s\n", cfg.backend, strings.Join(rep.KnownGaps, "; "))
	}
	fmt.Fprintf(stdout, "\ntotal time %.1fs\n", time.Since(start).Seconds())
	if cfg.jsonOut != "" {
		if err := writeJSON(cfg.jsonOut, rep); err != nil {
			fmt.Fprintf(stderr, "security: -json: %v\n", err)
			failed = true
		}
	}
	if failed {
		fmt.Fprintf(stdout, "FAIL: %s\n", strings.Join(rep.Failures, "; "))
		return 1
	}
	fmt.Fprintln(stdout, "PASS")
	return 0
}

// parseFlags reads the command line into a config, or returns nil and the
// exit status. -forbid-userns takes effect here, before anything else runs.
func parseFlags(args []string, stderr io.Writer) (*config, int) {
	fs := flag.NewFlagSet("security", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	var only string
	fs.StringVar(&cfg.bin, "bin", "./bin/skill-sandbox", "skill-sandbox binary to test")
	fs.StringVar(&cfg.suite, "suite", "all", "which suite: all, security or usability")
	fs.StringVar(&cfg.jsonOut, "json", "", "also write the results as JSON to this file")
	fs.StringVar(&only, "only", "", "comma-separated probe numbers to run (default all)")
	fs.BoolVar(&cfg.noBaseline, "no-baseline", false, "skip the unsandboxed baseline runs")
	fs.BoolVar(&cfg.verbose, "v", false, "print every probe's output")
	fs.BoolVar(&cfg.ablate, "ablate", true, "find the decisive layer of each blocked probe by disabling candidate layers one at a time")
	fs.BoolVar(&cfg.unpriv, "unprivileged", true, "when root, also run the sandboxed probes as uid 65534")
	fs.BoolVar(&cfg.noUserNS, "without-userns", true, "when root, also run where user namespaces are refused: the default must refuse, and --allow-degraded shows what gets through")
	fs.BoolVar(&cfg.forbidNS, "forbid-userns", false, "internal: set user.max_user_namespaces to 0 in this process's own user namespace, then run with --allow-degraded")
	fs.StringVar(&cfg.tmpBase, "tmp", "", "folder for temporary skills (default: next to -bin)")
	fs.StringVar(&cfg.backend, "backend", "native", "what runs the sandboxed probes: native or gvisor (runsc must be on PATH; see gvisor.go)")
	if err := fs.Parse(args); err != nil {
		return nil, 2
	}
	if cfg.forbidNS {
		if err := forbidUserNamespaces(); err != nil {
			fmt.Fprintf(stderr, "security: %v\n", err)
			return nil, 2
		}
		cfg.extraFlags = []string{"--allow-degraded"}
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(stderr, "security: unexpected argument %q\n", fs.Arg(0))
		return nil, 2
	}
	if msg := useBackend(&cfg); msg != "" {
		fmt.Fprintf(stderr, "security: %s\n", msg)
		return nil, 2
	}
	if only != "" {
		cfg.only = map[int]bool{}
		for _, f := range strings.Split(only, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				fmt.Fprintf(stderr, "security: -only: %v\n", err)
				return nil, 2
			}
			cfg.only[n] = true
		}
	}
	return &cfg, 0
}

// resolvePaths makes cfg.bin absolute and checks it exists, and fills in
// the repository root, the folder for temporary skills and the home
// folder; it returns the exit status, 0 on success.
func resolvePaths(cfg *config, stderr io.Writer) int {
	bin, err := filepath.Abs(cfg.bin)
	if err != nil {
		fmt.Fprintf(stderr, "security: %v\n", err)
		return 2
	}
	cfg.bin = bin
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintf(stderr, "security: binary: %v (run make build)\n", err)
		return 2
	}
	cfg.root, err = findRoot()
	if err != nil {
		fmt.Fprintf(stderr, "security: %v\n", err)
		return 2
	}
	if cfg.tmpBase == "" {
		// Temporary skills live next to the binary, not in /tmp, which the
		// sandbox may mask.
		cfg.tmpBase = filepath.Dir(bin)
	}
	cfg.home, err = os.UserHomeDir()
	if err != nil {
		fmt.Fprintf(stderr, "security: no home directory: %v\n", err)
		return 2
	}
	return 0
}

// runSuites runs the suites cfg.suite names, each even when the one before
// failed, and reports whether all passed.
func runSuites(cfg *config, rep *report, stdout, stderr io.Writer) bool {
	ok := true
	if cfg.suite != "usability" {
		if !runSecurity(cfg, rep, stdout, stderr) {
			ok = false
		}
	}
	if cfg.suite != "security" {
		if !runUsability(cfg, rep, stdout, stderr) {
			ok = false
		}
	}
	return ok
}

// writeJSON writes the report, indented, to path.
func writeJSON(path string, rep report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// findRoot walks up from the working directory to the folder holding go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "testdata", "attacks")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testdata/attacks not found above the working directory")
		}
		dir = parent
	}
}

// kernelRelease returns the running kernel's release string.
func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return runtime.GOOS
	}
	return strings.TrimSpace(string(b))
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
