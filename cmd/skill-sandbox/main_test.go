package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/internal/tempmode"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// cliVersion is the version linked into cliBinary, as make build links
// in git describe's.
const cliVersion = "v9.8.7-6-gabcdef0-dirty"

// cliBinary is the path of the skill-sandbox binary built once by TestMain
// for the end-to-end tests of this package.
var cliBinary string

func TestMain(m *testing.M) {
	// runCommand runs in-process in some tests: the sandbox re-executes
	// this test binary as its init process.
	run.ExecInitIfRequested()
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "skill-sandbox-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The sandbox may run as an unprivileged uid that must be able to
	// execute the binary.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cliBinary = filepath.Join(dir, "skill-sandbox")
	build := exec.Command("go", "build", "-ldflags=-X main.version="+cliVersion, "-o", cliBinary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building skill-sandbox:", err)
		return 1
	}
	// The verified copies and digests the tests make stay out of the
	// user's own cache folder (set after the build: go's own cache is
	// found through it too). Fuzz workers run this again: their build
	// keeps go's cache through GOCACHE.
	if out, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		os.Setenv("GOCACHE", strings.TrimSpace(string(out)))
	}
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	return tempmode.Guard(m.Run)
}

// cliResult is what one invocation of the built binary produced.
type cliResult struct {
	Stdout, Stderr string
	Code           int
}

// runCLI runs the built binary with args in dir ("" for the package folder)
// and returns its output and exit status.
func runCLI(t *testing.T, dir string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(cliBinary, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("running %v: %v", args, err)
	}
	return cliResult{Stdout: stdout.String(), Stderr: stderr.String(), Code: code}
}

// repoPath returns a path relative to the repository root.
func repoPath(elem ...string) string {
	return filepath.Join(append([]string{"..", ".."}, elem...)...)
}

// TestOneProc checks which commands run their Go code on one processor:
// run and audit, unless the caller set GOMAXPROCS.
func TestOneProc(t *testing.T) {
	for _, tc := range []struct {
		cmd, env string
		want     bool
	}{
		{"run", "", true},
		{"audit", "", true},
		{"run", "4", false},
		{"mcp", "", false},
		{"validate", "", false},
		{"scan", "", false},
	} {
		if got := oneProc(tc.cmd, tc.env); got != tc.want {
			t.Errorf("oneProc(%q, %q) = %v, want %v", tc.cmd, tc.env, got, tc.want)
		}
	}
}
