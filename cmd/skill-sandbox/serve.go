package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/serve"
)

const serveUsage = `Usage: skill-sandbox serve --tokens FILE [flags]
       skill-sandbox serve hash-token < TOKEN

Serve skills and their sandboxed runs over HTTP (HTTP/1.1 and HTTP/2;
TLS with --tls-cert and --tls-key, else cleartext, where HTTP/2 is
spoken with prior knowledge): a REST API (GET /v1/skills,
GET /v1/skills/{name}, POST /v1/executions, GET /v1/executions/{id},
GET /v1/executions/{id}/artifacts/{path}), /healthz, /readyz and
/metrics (Prometheus). Every API request needs a bearer token of the
tokens file, which names the token's tenant, the skill folders it sees and
the operator policy of its runs; another tenant's skills and executions
answer 404. One audit record per execution (and per refused request) goes
to --audit-log, else on stderr within the JSON log lines. See
docs/serve.md.

"serve hash-token" reads a token on stdin and prints its SHA-256, the
"sha256" of its entry in the tokens file.

SIGTERM or SIGINT drains the server: no new execution is accepted (503),
the accepted ones finish, or are stopped at --drain-timeout, and each
gets its record. Exit status: 0 after a drain that stopped no run, 1 on a
failure or when the drain stopped runs, 2 on a usage error.

Flags:
`

// serveFlags are the parsed flags of serve.
type serveFlags struct {
	listen           string
	tokens           string
	tlsCert, tlsKey  string
	auditLog         string
	metricsToken     string
	workDir          string
	maxRuns          int
	queue            int
	tenantMaxRuns    int
	tenantQueue      int
	drainTimeout     time.Duration
	keep             time.Duration
	keepRuns         int
	keepMemory       int64
	keepDisk         int64
	maxConns         int
	maxBody          int64
	prestart         int
	allowDegraded    bool
	requireIsolation bool
	logLevel         string
	backend          backendFlags
}

// newServeFlagSet returns serve's flags, bound to f.
func newServeFlagSet(f *serveFlags) *flag.FlagSet {
	fs := quietFlagSet("serve")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "listen on `ADDR` (host:port)")
	fs.StringVar(&f.tokens, "tokens", "", "the tokens `FILE` (JSON, docs/serve.md): hashed tokens, their tenants, skill folders and policies")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "serve TLS with the certificate chain in `FILE` (PEM; needs --tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the private key `FILE` of --tls-cert (PEM)")
	fs.StringVar(&f.auditLog, "audit-log", "", "append one audit record per execution to `FILE` instead of logging it on stderr")
	fs.StringVar(&f.metricsToken, "metrics-token-file", "", "`FILE` holding the SHA-256 (serve hash-token) of the bearer token /metrics then needs; its holder also gets the full /readyz report")
	fs.StringVar(&f.workDir, "work-dir", "", "`DIR` holding one folder per execution (default: a new folder in the temporary folder, removed at exit)")
	fs.IntVar(&f.maxRuns, "max-runs", serve.DefaultMaxRuns, "runs in progress at once (`N`)")
	fs.IntVar(&f.queue, "queue", serve.DefaultQueue, "accepted runs waiting for a slot (`N`); past it POST /v1/executions is answered 429 with Retry-After")
	fs.IntVar(&f.tenantMaxRuns, "tenant-max-runs", 0, "runs in progress at once for one tenant (`N`; default: --max-runs)")
	fs.IntVar(&f.tenantQueue, "tenant-queue", 0, "queue places one tenant's runs may take (`N`; default: --queue), so that one tenant cannot fill the queue")
	fs.DurationVar(&f.drainTimeout, "drain-timeout", 30*time.Second, "on SIGTERM, how long accepted runs may go on before they are stopped (`DURATION`)")
	fs.DurationVar(&f.keep, "keep", serve.DefaultKeep, "how long a finished execution, its output and artifacts are kept (`DURATION`)")
	fs.IntVar(&f.keepRuns, "keep-runs", serve.DefaultKeepRuns, "finished executions kept per tenant (`N`); the oldest go first")
	fs.IntVar(&f.maxConns, "max-conns", serve.DefaultMaxConns, "connections served at once (`N`); past it new ones wait in the kernel's backlog")
	fs.Int64Var(&f.keepMemory, "keep-memory", serve.DefaultKeepMemory, "memory the kept executions of one tenant may hold (stdout, stderr, output), in `BYTES`; the oldest go first")
	fs.Int64Var(&f.keepDisk, "keep-disk", serve.DefaultKeepDisk, "disk the folders of one tenant's kept executions may hold, in `BYTES`; the oldest go first")
	fs.Int64Var(&f.maxBody, "max-body", serve.DefaultMaxBodyBytes, "largest request body in `BYTES` (input files included)")
	fs.IntVar(&f.prestart, "prestart", defaultPrestart, "init processes kept started ahead of the runs (`N`; 0: none)")
	fs.BoolVar(&f.allowDegraded, "allow-degraded", false, "run even when an isolation layer is unavailable (by default such a run is refused and /readyz fails; the record names the missing layers)")
	fs.BoolVar(&f.requireIsolation, "require-isolation", false, "refuse runs when any sandbox layer is unavailable, disabled or covered ones included")
	fs.StringVar(&f.logLevel, "log-level", "info", "least level logged on stderr: `debug`, info, warn or error")
	addBackendFlags(fs, &f.backend)
	return fs
}

// cmdServe implements "skill-sandbox serve".
func cmdServe(args []string, stdin io.Reader, stdout, stderr io.Writer, sigs chan os.Signal) int {
	if len(args) > 0 && args[0] == "hash-token" {
		return cmdHashToken(args[1:], stdin, stdout, stderr)
	}
	var f serveFlags
	fs := newServeFlagSet(&f)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, fs, serveUsage)
			return 0
		}
		return misuse(stderr, "serve", "%v", err)
	}
	if msg := serveFlagsProblem(fs, &f); msg != "" {
		return misuse(stderr, "serve", "%s", msg)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return misuse(stderr, "serve", "--log-level %q: want debug, info, warn or error", f.logLevel)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	cfg, cleanup, err := serveConfig(&f, logger)
	if err != nil {
		errorf(stderr, "serve: %v", err)
		return exitRefused
	}
	defer cleanup()
	srv, err := serve.New(cfg)
	if err != nil {
		errorf(stderr, "serve: %v", err)
		return exitRefused
	}
	return runServer(srv, &f, logger, stderr, sigs)
}

// serveFlagsProblem returns the usage error of serve's flags, or "".
func serveFlagsProblem(fs *flag.FlagSet, f *serveFlags) string {
	switch {
	case fs.NArg() > 0:
		return fmt.Sprintf("unexpected argument %q", fs.Arg(0))
	case f.tokens == "":
		return "want --tokens FILE: no API request is served without a token"
	case (f.tlsCert == "") != (f.tlsKey == ""):
		return "--tls-cert and --tls-key go together"
	case f.allowDegraded && f.requireIsolation:
		return "--allow-degraded and --require-isolation contradict each other"
	case f.maxRuns <= 0:
		return fmt.Sprintf("--max-runs must be positive, got %d", f.maxRuns)
	case f.queue < 0:
		return fmt.Sprintf("--queue must not be negative, got %d", f.queue)
	case f.tenantMaxRuns < 0 || f.tenantMaxRuns > f.maxRuns:
		return fmt.Sprintf("--tenant-max-runs must be between 1 and --max-runs, got %d", f.tenantMaxRuns)
	case f.tenantQueue < 0 || f.tenantQueue > f.queue:
		return fmt.Sprintf("--tenant-queue must be between 1 and --queue, got %d", f.tenantQueue)
	case f.drainTimeout <= 0, f.keep <= 0:
		return "--drain-timeout and --keep must be positive"
	case f.keepRuns <= 0, f.maxBody <= 0, f.keepMemory <= 0, f.keepDisk <= 0, f.maxConns <= 0:
		return "--keep-runs, --keep-memory, --keep-disk, --max-body and --max-conns must be positive"
	case prestartProblem(f.prestart, f.maxRuns, setFlags(fs)["prestart"]) != "":
		return prestartProblem(f.prestart, f.maxRuns, setFlags(fs)["prestart"])
	}
	return f.backend.problem(setFlags(fs))
}

// serveConfig builds the server's config from the flags: the tokens, the
// work folder (made when not given; cleanup removes it) and the audit
// log, which may not lie where a run may write.
func serveConfig(f *serveFlags, logger *slog.Logger) (serve.Config, func(), error) {
	cleanup := func() {}
	tokens, err := serve.LoadTokens(f.tokens)
	if err != nil {
		return serve.Config{}, cleanup, err
	}
	cfg := serve.Config{
		Tokens: tokens, MaxRuns: f.maxRuns, Queue: f.queue, TenantMaxRuns: f.tenantMaxRuns, TenantQueue: f.tenantQueue,
		Keep: f.keep, KeepRuns: f.keepRuns, KeepMemory: f.keepMemory, KeepDisk: f.keepDisk, MaxConns: f.maxConns, MaxBodyBytes: f.maxBody, Prestart: prestartSize(f.prestart, f.maxRuns),
		Sandbox: run.Sandbox{AllowDegraded: f.allowDegraded, RequireIsolation: f.requireIsolation},
		Flags:   policy.Flags{AllowDegraded: f.allowDegraded},
		Version: toolVersion(), Log: logger, WorkDir: f.workDir,
	}
	f.backend.apply(&cfg.Flags, f.backend.set)
	if f.queue == 0 {
		cfg.Queue = -1 // serve's zero is its default
	}
	// Runs use the prepared environments, as skill-sandbox run does.
	if cache, err := prepare.DefaultCache(); err == nil {
		cfg.Environments = cache
	}
	if f.metricsToken != "" {
		sum, err := serve.LoadMetricsToken(f.metricsToken)
		if err != nil {
			return cfg, cleanup, err
		}
		cfg.MetricsToken = &sum
	}
	if cfg.WorkDir == "" {
		dir, err := os.MkdirTemp("", "skill-sandbox-serve-")
		if err == nil {
			// Searchable, not listable: a root server's scripts may run
			// as another uid, which must reach its execution's folder.
			err = os.Chmod(dir, 0o711)
		}
		if err != nil {
			return cfg, cleanup, fmt.Errorf("work folder: %w", err)
		}
		cfg.WorkDir = dir
		cleanup = func() { os.RemoveAll(dir) }
	} else if cfg.WorkDir, err = filepath.Abs(cfg.WorkDir); err != nil {
		return cfg, cleanup, err
	}
	if f.auditLog != "" {
		write := []string{cfg.WorkDir}
		for _, t := range tokens {
			if t.Policy == "" {
				continue
			}
			op, err := policy.ParseFile(t.Policy)
			if err != nil {
				return cfg, cleanup, fmt.Errorf("tenant %s: %w", t.Tenant, err)
			}
			write = append(write, op.Filesystem.Write...)
		}
		if err := auditLogOutsideGrants(f.auditLog, write); err != nil {
			return cfg, cleanup, err
		}
		if err := prepareStateDir(f.auditLog); err != nil {
			return cfg, cleanup, fmt.Errorf("audit log: %w", err)
		}
		log, err := audit.OpenLog(f.auditLog)
		if err != nil {
			return cfg, cleanup, err
		}
		cfg.AuditLog = log
		prev := cleanup
		cleanup = func() { log.Close(); prev() }
	}
	return cfg, cleanup, nil
}

// runServer listens and serves until SIGINT or SIGTERM, then drains.
func runServer(srv *serve.Server, f *serveFlags, logger *slog.Logger, stderr io.Writer, sigs chan os.Signal) int {
	ctx, _, stop := interruptContext(sigs)
	defer stop()
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		srv.Close()
		errorf(stderr, "serve: %v", err)
		return exitRefused
	}
	ln = srv.Listener(ln)
	hs := srv.HTTPServer()
	if rep := srv.Check(ctx); !rep.Ready {
		logger.Error("not ready: /readyz answers 503 until the cause is fixed", "problems", rep.Problems)
	}
	scheme := "http"
	if f.tlsCert != "" {
		scheme = "https"
	}
	logger.Info("serving", "address", scheme+"://"+ln.Addr().String(), "tenants", tenantCount(srv))
	served := make(chan error, 1)
	go func() {
		if f.tlsCert != "" {
			served <- hs.ServeTLS(ln, f.tlsCert, f.tlsKey)
			return
		}
		served <- hs.Serve(ln)
	}()
	select {
	case err = <-served:
		srv.Close()
		errorf(stderr, "serve: %v", err)
		return exitRefused
	case <-ctx.Done():
	}
	return drain(srv, hs, f.drainTimeout, logger)
}

// drain stops taking runs and connections, and waits for the accepted
// runs (stopped at timeout) and their answers.
func drain(srv *serve.Server, hs *http.Server, timeout time.Duration, logger *slog.Logger) int {
	logger.Info("draining", "timeout", timeout.String())
	dctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- srv.Drain(dctx) }()
	// Answers of runs stopped at the timeout still go out: the HTTP
	// server gets a little longer than the runs.
	hctx, hcancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	defer hcancel()
	herr := hs.Shutdown(hctx)
	derr := <-drained
	if herr != nil {
		hs.Close()
	}
	// Requests refused (503) while the HTTP server stopped may wait
	// behind the cap on refused-request records.
	srv.FlushRecords()
	if derr != nil {
		logger.Warn("drained: runs were stopped at the drain timeout; each has its record")
		return exitRefused
	}
	logger.Info("drained: every accepted run finished with its record")
	return 0
}

func tenantCount(srv *serve.Server) int { return len(srv.Tenants()) }

// cmdHashToken implements "skill-sandbox serve hash-token".
func cmdHashToken(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
			fmt.Fprint(stdout, "Usage: skill-sandbox serve hash-token < TOKEN\n\nRead a token on stdin (one line) and print its SHA-256 in hex, the\n\"sha256\" of its entry in the tokens file of skill-sandbox serve.\n")
			return 0
		}
		return misuse(stderr, "serve hash-token", "unexpected argument %q (the token is read on stdin)", args[0])
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 4097)).ReadString('\n')
	if err != nil && err != io.EOF {
		errorf(stderr, "serve hash-token: %v", err)
		return exitRefused
	}
	tok := strings.TrimRight(line, "\r\n")
	switch {
	case len(line) > 4096:
		return misuse(stderr, "serve hash-token", "the token is longer than 4096 bytes")
	case len(tok) < 16:
		return misuse(stderr, "serve hash-token", "want a token of at least 16 characters on stdin (make one with: openssl rand -hex 32)")
	case strings.ContainsAny(tok, " \t\r\n"):
		return misuse(stderr, "serve hash-token", "the token holds white space, which an Authorization header cannot carry")
	}
	fmt.Fprintln(stdout, serve.HashToken(tok))
	return 0
}
