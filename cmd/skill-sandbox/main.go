// Command skill-sandbox checks Agent Skills before they are installed and runs
// their scripts in a kernel-enforced sandbox, emitting one audit record per call.
//
// Usage:
//
//	skill-sandbox validate [--strict] [--json] [--recursive] PATH...
//	skill-sandbox list [--all] [--json] PATH
//	skill-sandbox run [flags] PATH SCRIPT [-- ARGS...]
//	skill-sandbox audit [flags] PATH SCRIPT [-- ARGS...]
//	skill-sandbox digest [--manifest] PATH
//	skill-sandbox sign --key KEY [--signature FILE] PATH
//	skill-sandbox verify --allowed-signers FILE [--signature FILE] [--principal NAME] PATH
//	skill-sandbox scan [--recursive] [--json] [--sarif FILE] [--fail-on SEVERITY] [--accept-unscanned] PATH...
//	skill-sandbox mcp --skills DIR [--skills DIR]... [flags]
//	skill-sandbox serve --tokens FILE [flags]
//	skill-sandbox prepare [--check] [--index URL] [flags] PATH
//	skill-sandbox policy [--policy FILE] [--json] [flags] PATH
//	skill-sandbox completion bash|zsh|fish
//	skill-sandbox version
//
// Run "skill-sandbox COMMAND -h" for the flags of one command.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
)

const usage = `Usage:
    skill-sandbox validate [--strict] [--json] [--recursive] PATH...
    skill-sandbox list [--all] [--json] PATH
    skill-sandbox run [flags] PATH SCRIPT [-- ARGS...]
    skill-sandbox audit [flags] PATH SCRIPT [-- ARGS...]
    skill-sandbox digest [--manifest] PATH
    skill-sandbox sign --key KEY [--signature FILE] PATH
    skill-sandbox verify --allowed-signers FILE [--signature FILE] [--principal NAME] PATH
    skill-sandbox scan [--recursive] [--json] [--sarif FILE] [--fail-on SEVERITY] [--accept-unscanned] PATH...
    skill-sandbox mcp --skills DIR [--skills DIR]... [flags]
    skill-sandbox serve --tokens FILE [flags]
    skill-sandbox prepare [--check] [--index URL] [flags] PATH
    skill-sandbox policy [--policy FILE] [--json] [flags] PATH
    skill-sandbox completion bash|zsh|fish
    skill-sandbox version

Commands:
    validate   Check skill folders against the Agent Skills rules.
    list       List a skill's scripts and the interpreter each runs under.
    run        Run a skill's script in the sandbox.
    audit      Like run, and write one JSONL audit record to stderr
               (or append it to --audit-log FILE).
    digest     Print the canonical digest of a skill folder (what a
               signature signs).
    sign       Sign a skill folder with ssh-keygen (writes SKILL.sig).
    verify     Check a skill's signature against an allowed_signers file.
    scan       Look for hidden Unicode, prompt injection, pipe-to-shell,
               credential reads and more before installing a skill.
    mcp        Serve skills to agents over the Model Context Protocol
               (stdio), every script run in the sandbox.
    serve      Serve skills and sandboxed runs over HTTP to several
               tenants: REST API, health, readiness and metrics.
    prepare    Build a skill's Python and Node dependencies into cached
               environments, pip and npm run in the sandbox
               (docs/dependencies.md).
    policy     Print the policy a run of a skill would get (limits, paths,
               hosts, environment) without running anything.
    completion Print a completion script for bash, zsh or fish.
    version    Print the version (also --version): the git describe of
               the build, else its commit, else "devel".

Run "skill-sandbox COMMAND -h" for the flags of a command.

Exit status: 0 success, 1 failure (invalid skill, failed run), 2 usage error.
A script run by run/audit passes its own exit status through (128+N when
killed by signal N, 124 when it timed out).
`

func main() {
	// On macOS the sandbox re-executes this binary as its init process; that
	// process must never reach the CLI below. (On Linux this does nothing.)
	run.ExecInitIfRequested()
	// Next, before anything can be interrupted: a SIGINT or SIGTERM from
	// now on is held until run or audit has written its record. The
	// other commands keep the default handling from the start: catching
	// and releasing costs a round trip to the runtime's signal thread
	// per signal each way, about 0.4 ms of a "validate" or "version".
	var sigs chan os.Signal
	if len(os.Args) > 1 && oneProc(os.Args[1], os.Getenv("GOMAXPROCS")) {
		runtime.GOMAXPROCS(1)
	}
	if len(os.Args) > 1 && writesRecords(os.Args[1]) {
		sigs = catchSignals()
	}
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr, sigs))
}

// oneProc reports whether the command named cmd runs its Go code on one
// processor: run and audit, whose supervisor mostly waits (the init
// process and the script are other processes, not goroutines) and whose
// few goroutines only copy output and watch limits. With a second P the
// runtime wakes spare threads to look for work whenever a goroutine
// blocks or is readied: 0.47 ms less CPU per `run` of /bin/true with one
// (10.28 against 9.81 ms, 150 interleaved runs), the wall time the same.
// A GOMAXPROCS the caller set (env) is theirs to keep.
func oneProc(cmd, env string) bool {
	return env == "" && (cmd == "run" || cmd == "audit")
}

// writesRecords reports whether the command named cmd writes audit
// records: run, audit and mcp, which hold SIGINT and SIGTERM until the
// record is written.
func writesRecords(cmd string) bool {
	return cmd == "run" || cmd == "audit" || cmd == "mcp" || cmd == "serve"
}

// dispatch runs one subcommand and returns the process exit status. sigs
// holds the signals caught since start (see catchSignals); nil means none
// are caught yet.
func dispatch(args []string, stdout, stderr io.Writer, sigs chan os.Signal) int {
	// Only run, audit and mcp write records; every other command gets the
	// default handling back.
	if sigs != nil && (len(args) == 0 || !writesRecords(args[0])) {
		releaseSignals(sigs)
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "validate":
		return cmdValidate(args[1:], stdout, stderr)
	case "list":
		return cmdList(args[1:], stdout, stderr)
	case "run":
		return cmdRun(args[1:], stdout, stderr, false, sigs)
	case "audit":
		return cmdRun(args[1:], stdout, stderr, true, sigs)
	case "prepare":
		return cmdPrepare(args[1:], stdout, stderr)
	case "policy":
		return cmdPolicy(args[1:], stdout, stderr)
	case "digest":
		return cmdDigest(args[1:], stdout, stderr)
	case "sign":
		return cmdSign(args[1:], stdout, stderr)
	case "verify":
		return cmdVerify(args[1:], stdout, stderr)
	case "scan":
		return cmdScan(args[1:], stdout, stderr)
	case "mcp":
		return cmdMCP(args[1:], os.Stdin, stdout, stderr, sigs)
	case "serve":
		return cmdServe(args[1:], os.Stdin, stdout, stderr, sigs)
	case "completion":
		return cmdCompletion(args[1:], stdout, stderr)
	case "man":
		return cmdMan(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "skill-sandbox %s\n", toolVersion())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		errorf(stderr, "unknown command %q", args[0])
		fmt.Fprintln(stderr, "see skill-sandbox -h")
		return 2
	}
}

// quietFlagSet returns a flag set that prints nothing itself: the command
// reports a mistake in the tool's one voice and prints its help on -h.
func quietFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// printHelp writes a command's help to w: its usage text, then its flags.
func printHelp(w io.Writer, fs *flag.FlagSet, text string) {
	fmt.Fprint(w, text)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// misuse reports a command-line mistake of cmd in the tool's one voice:
// one error line, then where the command's help is rather than all of it.
// It returns the exit status of a usage error.
func misuse(stderr io.Writer, cmd, format string, a ...any) int {
	errorf(stderr, "%s: "+format, append([]any{cmd}, a...)...)
	fmt.Fprintf(stderr, "see skill-sandbox %s -h\n", cmd)
	return exitUsage
}

// errorf prints an error in the tool's one format.
func errorf(w io.Writer, format string, a ...any) {
	// Through termSafe: an error may quote a name from the skill (a file
	// the validation refused), which must not reach a terminal as an
	// escape sequence.
	fmt.Fprintf(&termSafe{w: w}, "skill-sandbox: error: "+format+"\n", a...)
}

// timeoutFlag is a time limit given as a Go duration or whole seconds,
// the forms a policy file takes (policy.ParseTimeout).
type timeoutFlag struct{ d *time.Duration }

func (f timeoutFlag) String() string {
	if f.d == nil || *f.d == 0 { // no default of its own to show
		return ""
	}
	return f.d.String()
}

func (f timeoutFlag) Set(s string) error {
	d, err := policy.ParseTimeout(s)
	if err != nil {
		return err
	}
	*f.d = d
	return nil
}
