package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/mcp"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/run"
)

const mcpUsage = `Usage: skill-sandbox mcp --skills DIR [--skills DIR]... [flags]

Serve the skills found in each DIR (a skill folder, or a folder of skill
folders) to an agent over the Model Context Protocol: newline-delimited
JSON-RPC 2.0 on stdin and stdout, every protocol revision from 2024-11-05:
2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25 (with the initialize
handshake) and 2026-07-28 (stateless). Diagnostics and, without
--audit-log, the audit records go to stderr; stdout carries only protocol
messages. An --audit-log in the state folder
($XDG_STATE_HOME/skill-sandbox, else ~/.local/state/skill-sandbox) creates
that folder. A server whose every run would be refused (a workspace the
sandbox cannot write, missing kernel layers) does not start. See
docs/mcp.md.

Tools: list_skills, read_skill, read_skill_file, run_skill_script,
run_command; with --workspace also write_workspace_file and
read_workspace_file, which put a file into the workspace and read one
back; with --allow-prepare also prepare_skill, which builds a skill's
Python environment (off by default). Runs use the skills' prepared
environments as run does (docs/dependencies.md). Every script or command runs in the sandbox with the limits
given here and in the operator policy (--policy; a skill's own
skill-sandbox.toml may only lower them); no tool call can widen them. Each call that runs something
or touches a workspace file writes one audit record, refused calls too.

With --http ADDR the same server speaks MCP's Streamable HTTP transport at
http://ADDR/mcp instead (sessions for 2025-03-26 to 2025-11-25, stateless
2026-07-28 requests), on a loopback address unless --http-token-file or
--http-allow-public is given; browser requests from other origins are
refused (--http-allow-origin allows one). It stops on SIGINT/SIGTERM.

The server stops at EOF on stdin (or SIGINT/SIGTERM), after stopping every
run in progress. Exit status: 0 after EOF, 128+N after signal N, 1 on a
failure, 2 on a usage error.

Flags:
`

// defaultPrestart is --prestart's default: a small pool saves the start of
// the sandbox's namespaces and init process on the next calls, at the cost
// of that many idle processes.
const defaultPrestart = 2

// prestartProblem is the usage error of --prestart N with --max-runs
// maxRuns, or "". A pool larger than the runs that may be in progress
// at once would only keep idle processes (or gVisor sandboxes, tens of
// MiB each): every run takes one and a replacement starts behind it.
// The default is cut to maxRuns instead (see prestartSize).
func prestartProblem(prestart, maxRuns int, set bool) string {
	if prestart < 0 || set && prestart > maxRuns {
		return fmt.Sprintf("--prestart must be between 0 and --max-runs (%d), got %d: each run in progress takes one pre-started sandbox", maxRuns, prestart)
	}
	return ""
}

// prestartSize is the pool's size: --prestart, at most maxRuns.
func prestartSize(prestart, maxRuns int) int { return min(prestart, maxRuns) }

// mcpFlags are the parsed flags of mcp.
type mcpFlags struct {
	skills           listFlags
	policyFile       string
	allowDegraded    bool
	allowHosts       listFlags
	denyHosts        listFlags
	allowLocal       localPortFlags
	allowUnix        listFlags
	requireSignature bool
	allowedSigners   string
	auditLog         string
	workspace        string
	allowAutorun     bool
	maxRuns          int
	timeout          time.Duration
	memoryMB         int
	allowNetwork     bool
	requireIsolation bool
	maxMessage       int
	maxBuffered      int64
	prestart         int
	allowPrepare     bool
	index            string
	backend          backendFlags
	http             mcpHTTPFlags
}

// newMCPFlagSet returns mcp's flags, bound to f.
func newMCPFlagSet(f *mcpFlags) *flag.FlagSet {
	fs := quietFlagSet("mcp")
	fs.Var(&f.skills, "skills", "serve the skills in `DIR` (repeatable)")
	fs.StringVar(&f.policyFile, "policy", "", "operator policy `FILE` (docs/policy.md): limits, grants, hosts, environment of every run; the flags below override it")
	fs.StringVar(&f.auditLog, "audit-log", "", "append one audit record per run to `FILE` instead of writing it on stderr")
	fs.StringVar(&f.workspace, "workspace", "", "`DIR` runs may write (created when missing), also the working directory of run_command and run_skill_script; it may not overlap a skills folder")
	fs.BoolVar(&f.allowAutorun, "allow-autorun", false, "keep writable, in the --workspace, the files the caller's tools run on their own (.git, .envrc, .vscode, ...), for runs and write_workspace_file alike; by default runs see them read-only and the tool refuses them (docs/grants.md)")
	fs.IntVar(&f.maxRuns, "max-runs", mcp.DefaultMaxRuns, "runs in progress at once; more calls wait")
	fs.IntVar(&f.prestart, "prestart", defaultPrestart, "init processes kept started ahead of the calls, in their namespaces and waiting for a run (`N`; 0: none)")
	fs.Var(timeoutFlag{&f.timeout}, "timeout", "wall-time limit of each run, a `duration` (\"90s\") or whole seconds; a call may ask for less, never more (default: the policy's, else 30s)")
	fs.IntVar(&f.memoryMB, "memory", 0, "memory limit of each run in `MiB` (default: the policy's, else 512)")
	fs.BoolVar(&f.allowNetwork, "allow-network", false, "keep the host network in runs (no network namespace, no Landlock TCP rules)")
	fs.Var(&f.allowHosts, "allow-host", "let runs reach `PATTERN` through the filtering proxy (repeatable; docs/network.md)")
	fs.Var(&f.denyHosts, "deny-host", "never let runs reach `PATTERN`, even if --allow-host matches (repeatable)")
	fs.Var(&f.allowLocal, "allow-local", "let runs reach the host's 127.0.0.1:`PORT` (repeatable; docs/network.md)")
	fs.Var(&f.allowUnix, "allow-unix", "let runs connect to the host's unix socket `PATH` (repeatable; docs/network.md)")
	fs.BoolVar(&f.allowDegraded, "allow-degraded", false, "run even when an isolation layer is unavailable (by default such a run is refused; the record names the missing layers)")
	fs.BoolVar(&f.requireIsolation, "require-isolation", false, "refuse runs when any sandbox layer is unavailable, disabled or covered ones included")
	fs.BoolVar(&f.requireSignature, "require-signature", false, "run a skill's scripts only when its SKILL.sig is a good signature from --allowed-signers (run_command is then refused)")
	fs.StringVar(&f.allowedSigners, "allowed-signers", "", "OpenSSH allowed_signers `FILE` for --require-signature")
	fs.BoolVar(&f.allowPrepare, "allow-prepare", false, "offer the prepare_skill tool: agents may build a listed skill's Python environment (pip in the sandbox, the package index below only, one build at a time; docs/dependencies.md)")
	fs.StringVar(&f.index, "index", "", "with --allow-prepare: the simple package index `URL` pip uses (default: the operator policy's [sandbox] package_index, else "+prepare.DefaultIndex+")")
	addBackendFlags(fs, &f.backend)
	fs.IntVar(&f.maxMessage, "max-message", mcp.DefaultMaxMessageBytes, "largest incoming message in `BYTES`")
	addMCPHTTPFlags(fs, &f.http)
	fs.Int64Var(&f.maxBuffered, "max-buffered", mcp.DefaultMaxBufferedBytes, "`BYTES` held for requests in progress and responses not yet read by the client; a request that does not fit is refused as busy")
	return fs
}

// cmdMCP implements "skill-sandbox mcp": parse the flags, build the
// server's config, open the audit log, check the sandbox, serve.
func cmdMCP(args []string, stdin io.Reader, stdout, stderr io.Writer, sigs chan os.Signal) int {
	var f mcpFlags
	fs := newMCPFlagSet(&f)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stderr, fs, mcpUsage) // stdout carries only protocol messages
			return 0
		}
		return misuse(stderr, "mcp", "%v", err)
	}
	// Limits given on the command line override the operator policy;
	// those not given leave it (or the defaults) in force.
	set := setFlags(fs)
	if msg := mcpFlagsProblem(fs, &f, set); msg != "" {
		return misuse(stderr, "mcp", "%s", msg)
	}
	cfg := mcpConfig(&f, set, stderr)
	if f.policyFile != "" {
		op, err := policy.ParseFile(f.policyFile)
		if err != nil {
			errorf(stderr, "mcp: %v", err)
			return exitRefused
		}
		cfg.Policy = op
		if cfg.Prepare.Index == "" {
			cfg.Prepare.Index = op.Sandbox.PackageIndex
		}
	}
	if f.auditLog != "" {
		log, err := openMCPAuditLog(f.auditLog, f.workspace, cfg.Policy)
		if err != nil {
			errorf(stderr, "mcp: %v", err)
			return exitRefused
		}
		defer log.Close()
		cfg.AuditLog = log
	}
	srv, err := mcp.NewServer(cfg)
	if err != nil {
		errorf(stderr, "mcp: %v", err)
		return exitRefused
	}
	if f.http.addr != "" {
		return serveMCPHTTP(srv, &f.http, stderr, sigs)
	}
	return serveMCP(srv, stdin, stdout, stderr, sigs)
}

// mcpFlagsProblem returns the usage error of mcp's flags, or "";
// set holds the flags given.
func mcpFlagsProblem(fs *flag.FlagSet, f *mcpFlags, set map[string]bool) string {
	switch {
	case fs.NArg() > 0:
		return fmt.Sprintf("unexpected argument %q (f.skills folders are given with --skills)", fs.Arg(0))
	case len(f.skills) == 0:
		return "want at least one --skills DIR"
	case f.requireSignature && f.allowedSigners == "":
		return "--require-signature needs --allowed-signers FILE"
	case f.allowedSigners != "" && !f.requireSignature:
		return "--allowed-signers is only used with --require-signature"
	case f.allowDegraded && f.requireIsolation:
		return "--allow-degraded and --require-isolation contradict each other"
	case f.allowAutorun && f.workspace == "":
		return "--allow-autorun needs --workspace DIR (it exempts the workspace)"
	case f.index != "" && !f.allowPrepare:
		return "--index is only used with --allow-prepare"
	case f.maxRuns <= 0:
		return fmt.Sprintf("--max-runs must be positive, got %d", f.maxRuns)
	case prestartProblem(f.prestart, f.maxRuns, set["prestart"]) != "":
		return prestartProblem(f.prestart, f.maxRuns, set["prestart"])
	case set["timeout"] && f.timeout <= 0:
		return fmt.Sprintf("--timeout must be positive, got %v", f.timeout)
	case set["memory"] && f.memoryMB <= 0:
		return fmt.Sprintf("--memory must be positive, got %d", f.memoryMB)
	case f.maxMessage <= 0:
		return fmt.Sprintf("--max-message must be positive, got %d", f.maxMessage)
	case f.maxBuffered <= 0:
		return fmt.Sprintf("--max-buffered must be positive, got %d", f.maxBuffered)
	}
	if msg := f.backend.problem(set); msg != "" {
		return msg
	}
	return mcpHTTPProblem(&f.http)
}

// mcpConfig returns the server's config of the flags f (set: those
// given), without the operator policy and the audit log.
func mcpConfig(f *mcpFlags, set map[string]bool, stderr io.Writer) mcp.Config {
	cfg := mcp.Config{
		SkillDirs: f.skills,
		Sandbox: run.Sandbox{
			AllowDegraded:    f.allowDegraded,
			RequireIsolation: f.requireIsolation,
		},
		Flags: policy.Flags{
			AllowNetwork:  f.allowNetwork,
			AllowHosts:    f.allowHosts,
			DenyHosts:     f.denyHosts,
			AllowLocal:    f.allowLocal,
			AllowUnix:     absPaths(f.allowUnix),
			AllowDegraded: f.allowDegraded,
		},
		AllowedSigners:   f.allowedSigners,
		Workspace:        f.workspace,
		MaxRuns:          f.maxRuns,
		Prestart:         prestartSize(f.prestart, f.maxRuns),
		MaxMessageBytes:  f.maxMessage,
		MaxBufferedBytes: f.maxBuffered,
		Version:          toolVersion(),
		Log:              stderr,
	}
	if f.allowAutorun {
		cfg.Sandbox.AutorunWritable = []string{f.workspace}
	}
	if set["timeout"] {
		cfg.Flags.Timeout = f.timeout
	}
	if set["memory"] {
		cfg.Flags.MemoryMB = f.memoryMB
	}
	// Runs use the caller's prepared environments, as skill-sandbox run
	// does; without a cache folder they run without.
	if cache, err := prepare.DefaultCache(); err == nil {
		cfg.Environments = cache
	}
	cfg.AllowPrepare = f.allowPrepare
	cfg.Prepare = prepare.BuildOptions{Index: f.index,
		Sandbox: run.Sandbox{AllowDegraded: f.allowDegraded, RequireIsolation: f.requireIsolation}}
	f.backend.apply(&cfg.Flags, set)
	return cfg
}

// openMCPAuditLog opens the audit log at name, refused inside the
// workspace or a write grant of the operator policy op (nil without),
// where a run could rewrite the records.
func openMCPAuditLog(name, workspace string, op *policy.Policy) (*audit.Log, error) {
	write := []string{workspace}
	if op != nil {
		write = append(write, op.Filesystem.Write...)
	}
	if err := auditLogOutsideGrants(name, write); err != nil {
		return nil, err
	}
	if err := prepareStateDir(name); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return audit.OpenLog(name)
}

// serveMCP checks that srv's runs can start and serves stdin and stdout
// until EOF or SIGINT/SIGTERM; it returns the exit status.
func serveMCP(srv *mcp.Server, stdin io.Reader, stdout, stderr io.Writer, sigs chan os.Signal) int {
	return serveUntilSignal(srv, stderr, sigs, func(ctx context.Context) error {
		return srv.Serve(ctx, stdin, stdout)
	})
}

// serveUntilSignal checks that srv's runs can start, then calls serve
// with a context canceled by SIGINT or SIGTERM; it returns the exit
// status.
func serveUntilSignal(srv *mcp.Server, stderr io.Writer, sigs chan os.Signal, serve func(context.Context) error) int {
	// SIGINT and SIGTERM stop the server as EOF does: every run is
	// stopped and has its record before the exit.
	ctx, interrupted, stop := interruptContext(sigs)
	defer stop()
	// A server whose every run would be refused does not start: a client
	// would otherwise see it answer as if it were healthy.
	err := srv.Check(ctx)
	if err == nil {
		err = serve(ctx)
	}
	if sig, ok := interrupted().(syscall.Signal); ok {
		return exitSignal + int(sig)
	}
	if err != nil {
		errorf(stderr, "mcp: %v", err)
		return exitRefused
	}
	return 0
}
