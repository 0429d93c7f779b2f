package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/internal/refusecap"
	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/prepare"
	"github.com/skill-sandbox/skill-sandbox/run"
	"github.com/skill-sandbox/skill-sandbox/sign"
)

// Defaults applied by New to zero fields of a Config.
const (
	DefaultMaxRuns      = 4
	DefaultQueue        = 64
	DefaultMaxBodyBytes = 32 << 20
	DefaultKeep         = time.Hour
	DefaultKeepRuns     = 1000
	// DefaultKeepMemory bounds the memory of one tenant's kept answers.
	DefaultKeepMemory = 256 << 20
	// DefaultKeepDisk bounds the bytes the kept executions' folders of
	// one tenant hold: four runs that each wrote the default write_mb
	// (1 GiB), so that the last few results stay downloadable, while
	// eight tenants fit a 32 GiB volume.
	DefaultKeepDisk = 4 << 30
	// DefaultOutputCap is the stdout and stderr kept per run for its
	// execution's answer.
	DefaultOutputCap = 1 << 20
	// DefaultMaxOutputJSON bounds the output.json a script may leave.
	DefaultMaxOutputJSON = 1 << 20
	// DefaultReadHeaderTimeout bounds the wait for a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
)

// Config is what the operator decides when the server starts. No request
// can change it.
type Config struct {
	// Tokens are the bearer tokens and the tenants they act for
	// (LoadTokens); at least one.
	Tokens []Token

	// Sandbox is the template of every run (isolation options such as
	// AllowDegraded, RequireIsolation, Strict). Its limits, network and
	// environment are replaced by the resolved policy of each run.
	Sandbox run.Sandbox

	// Environments is the cache of the skills' prepared Python
	// environments (package prepare): runs of a prepared skill get its
	// environment read-only, as skill-sandbox run does, one whose
	// environment changed since it was built is refused, and the skill
	// listing shows each skill's state. A zero Dir uses none. Agents
	// cannot build environments through the server.
	Environments prepare.Cache

	// Flags are the limits and grants given on the command line, the
	// strongest source of each run's policy (policy.Resolve); the
	// tenant's policy file comes next, then the skill's request.
	Flags policy.Flags

	// WorkDir holds one folder per execution: its input files, its
	// write grant and working directory, its artifacts. It must exist.
	WorkDir string

	// MaxRuns bounds the runs in progress (DefaultMaxRuns); Queue the
	// accepted runs waiting for a slot (DefaultQueue; negative: none).
	// Past both, POST /v1/executions is answered 429 with Retry-After.
	MaxRuns, Queue int
	// TenantMaxRuns bounds one tenant's runs in progress; MaxRuns when
	// zero. A tenant at its bound waits in the queue.
	TenantMaxRuns int
	// TenantQueue bounds one tenant's runs waiting for a slot, so that
	// one tenant cannot take every place of the queue; Queue when zero.
	TenantQueue int

	// Keep and KeepRuns bound how long and how many finished executions
	// of each tenant are kept (DefaultKeep, DefaultKeepRuns); older ones
	// are deleted with their folders.
	Keep     time.Duration
	KeepRuns int
	// KeepMemory bounds the bytes the finished executions of each tenant
	// hold in memory (their stdout, stderr, output, record, artifacts
	// list and args: up to about 3 MiB each) (DefaultKeepMemory); past
	// it the oldest are deleted, as past KeepRuns.
	KeepMemory int64
	// KeepDisk bounds the bytes the folders of the finished executions
	// of each tenant hold (DefaultKeepDisk), measured as each finishes;
	// past it the oldest are deleted. The one that just finished is kept
	// even alone over it.
	KeepDisk int64

	// MaxBodyBytes bounds a request body (DefaultMaxBodyBytes).
	MaxBodyBytes int64

	// Prestart is how many init processes are kept started ahead of the
	// runs (run.Pool); zero starts none.
	Prestart int

	// AuditLog receives one record per execution; nil writes the records
	// to Log at level INFO under the key "record".
	AuditLog *audit.Log

	// MetricsToken, when set, is the SHA-256 of the bearer token that
	// /metrics then needs (LoadMetricsToken); its holder also gets the
	// full /readyz report. Nil: /metrics answers anyone.
	MetricsToken *[32]byte

	// Version is the server version in records.
	Version string

	// Log receives structured logs; nil discards them.
	Log *slog.Logger

	// MaxConns bounds the connections served at once through Listener
	// (DefaultMaxConns).
	MaxConns int

	// ReadHeaderTimeout bounds the wait for a request's headers
	// (DefaultReadHeaderTimeout): a client sending them slowly
	// (slowloris) loses its connection.
	ReadHeaderTimeout time.Duration
}

// Server serves the REST API of a Config. Make one with New.
type Server struct {
	cfg     Config
	tenants map[string]*tenant
	digests *sign.HashCache
	pool    *run.Pool
	queue   *queue
	// python is the interpreter environments are keyed by, found once;
	// its Path is "" when none was.
	python prepare.Python
	// node is the node and npm Node environments are keyed by.
	node prepare.Node
	// uploads bounds the request bodies read and decoded at once, so
	// that many large uploads cannot take unbounded memory: each holds
	// at most about twice Config.MaxBodyBytes (the body and its files
	// decoded) until its files are on disk.
	uploads chan struct{}
	metrics *metrics
	ready   *readiness
	// noisy bounds the lines logged for clients without a valid token.
	noisy *logLimit
	// refusals caps the records of requests refused for the server's
	// state (refusals.go).
	refusals *refusecap.Log[audit.Record]

	// runCtx is the context of every run; Drain cancels it at its
	// deadline.
	runCtx    context.Context
	cancelRun context.CancelFunc
	runs      sync.WaitGroup // executions accepted and not yet recorded

	mu       sync.Mutex
	draining bool
	stop     chan struct{} // closed by Drain: the janitor stops
}

// New checks cfg, loads each tenant's policy file and returns a server.
// Close (or Drain) releases it.
func New(cfg Config) (*Server, error) {
	if len(cfg.Tokens) == 0 {
		return nil, errors.New("no tokens: no client could authenticate")
	}
	if cfg.WorkDir == "" {
		return nil, errors.New("no work folder for the executions")
	}
	if st, err := os.Stat(cfg.WorkDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("work folder %s: not a folder", cfg.WorkDir)
	}
	if cfg.MetricsToken != nil {
		for _, t := range cfg.Tokens {
			if t.SHA256 == *cfg.MetricsToken {
				return nil, fmt.Errorf("the metrics token is token %s of tenant %s: give /metrics a token of its own", t.ID, t.Tenant)
			}
		}
	}
	applyDefaults(&cfg)
	s := &Server{cfg: cfg, tenants: map[string]*tenant{}, digests: sign.NewHashCache(), stop: make(chan struct{})}
	if cfg.Environments.Dir != "" {
		s.python, _ = prepare.FindPython(context.Background()) // none: every skill with requirements is listed invalid
		s.node, _ = prepare.FindNode(context.Background())
	}
	for _, t := range cfg.Tokens {
		if _, ok := s.tenants[t.Tenant]; ok {
			continue
		}
		tn, err := newTenant(t)
		if err != nil {
			return nil, err
		}
		s.tenants[t.Tenant] = tn
	}
	s.queue = newQueue(cfg.MaxRuns, cfg.Queue, cfg.TenantMaxRuns, cfg.TenantQueue)
	s.uploads = make(chan struct{}, max(2, cfg.MaxRuns))
	for _, tn := range s.tenants {
		tn.uploads = make(chan struct{}, tenantUploads(cap(s.uploads), len(s.tenants)))
	}
	s.metrics = newMetrics()
	s.noisy = &logLimit{}
	s.refusals = s.newRefusalLog()
	s.ready = &readiness{}
	s.runCtx, s.cancelRun = context.WithCancel(context.Background())
	if cfg.Prestart > 0 {
		if err := s.startPool(); err != nil {
			s.log().Warn("no pre-started init processes", "error", err.Error())
		}
	}
	for _, tn := range s.tenants {
		h, err := s.newTenantMCP(tn)
		if err != nil {
			s.closeMCP()
			if s.pool != nil {
				s.pool.Close()
			}
			return nil, err
		}
		tn.mcp = h
	}
	go s.janitor()
	return s, nil
}

// tenantUploads is how many request bodies one tenant may have read at
// once: half of the server's places when there are other tenants, so that
// a tenant sending its bodies slowly (up to the server's read timeout)
// leaves the others room.
func tenantUploads(places, tenants int) int {
	if tenants <= 1 {
		return places
	}
	return max(1, places/2)
}

func applyDefaults(cfg *Config) {
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	switch {
	case cfg.Queue == 0:
		cfg.Queue = DefaultQueue
	case cfg.Queue < 0:
		cfg.Queue = 0
	}
	if cfg.TenantMaxRuns <= 0 || cfg.TenantMaxRuns > cfg.MaxRuns {
		cfg.TenantMaxRuns = cfg.MaxRuns
	}
	if cfg.TenantQueue <= 0 || cfg.TenantQueue > cfg.Queue {
		cfg.TenantQueue = cfg.Queue
	}
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	if cfg.KeepRuns <= 0 {
		cfg.KeepRuns = DefaultKeepRuns
	}
	if cfg.KeepMemory <= 0 {
		cfg.KeepMemory = DefaultKeepMemory
	}
	if cfg.KeepDisk <= 0 {
		cfg.KeepDisk = DefaultKeepDisk
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Sandbox.OutputCap == 0 {
		cfg.Sandbox.OutputCap = DefaultOutputCap
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
}

// startPool starts the pre-started init processes, shaped like a run of
// the first tenant's first skills folder.
func (s *Server) startPool() error {
	like := s.cfg.Sandbox
	for _, tn := range s.tenants {
		if sb, err := s.sandboxFor(tn, tn.skillDirs[0], tn.skillDirs[0], false); err == nil {
			like = sb
		}
		break
	}
	pool, err := run.NewPool(s.cfg.Prestart, 0, like)
	if err != nil {
		return err
	}
	s.pool = pool
	if err := s.startSlots(); err != nil {
		pool.Close()
		s.pool = nil
		return err
	}
	return nil
}

func (s *Server) log() *slog.Logger { return s.cfg.Log }

// route is one route of the server: its method, its path as the OpenAPI
// document writes it, and its handler (wrapped in auth unless open).
type route struct {
	method, path string
	open         http.HandlerFunc
	authed       func(http.ResponseWriter, *http.Request, *caller)
}

// routes are the server's routes, in the order of docs/serve.md.
func (s *Server) routes() []route {
	return []route{
		{method: "GET", path: "/v1/skills", authed: s.listSkills},
		{method: "GET", path: "/v1/skills/{name}", authed: s.getSkill},
		{method: "POST", path: "/v1/executions", authed: s.postExecution},
		{method: "GET", path: "/v1/executions/{id}", authed: s.getExecution},
		{method: "GET", path: "/v1/executions/{id}/artifacts/{path}", authed: s.getArtifact},
		{method: "GET", path: "/v1/openapi.json", open: s.openAPI},
		{method: "GET", path: "/healthz", open: s.healthz},
		{method: "GET", path: "/readyz", open: s.readyz},
		{method: "GET", path: "/metrics", open: s.serveMetrics},
		// The MCP endpoint (/mcp, every method) is mounted by Handler:
		// not a REST route, it is not in the OpenAPI document.
	}
}

// Handler returns the server's routes; see docs/serve.md. Any other
// path answers 404 to an authenticated client, 401 to others.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		// The artifact's path may hold '/': the last wildcard takes the
		// rest of the path.
		pattern := rt.method + " " + strings.Replace(rt.path, "{path}", "{path...}", 1)
		if rt.open != nil {
			mux.HandleFunc(pattern, rt.open)
			continue
		}
		mux.Handle(pattern, s.auth(rt.authed))
	}
	// The caller's tenant's MCP server (mcp.go).
	mux.Handle("/mcp", s.auth(s.serveMCP))
	mux.Handle("/", s.auth(func(w http.ResponseWriter, r *http.Request, _ *caller) {
		writeProblem(w, r, http.StatusNotFound, ProblemNotFound, "no such route")
	}))
	return s.recorder(mux)
}

// caller is the authenticated client of one request.
type caller struct {
	token  Token
	tenant *tenant
}

// auth wraps a handler that needs a caller: a request without a known
// bearer token is answered 401 before any other check, so that an
// unauthenticated client learns nothing of the routes or names.
func (s *Server) auth(h func(http.ResponseWriter, *http.Request, *caller)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
			s.metrics.authFailure()
			writeProblem(w, r, http.StatusUnauthorized, ProblemUnauthorized, "an Authorization: Bearer token is required")
			return
		}
		t, found := match(s.cfg.Tokens, strings.TrimSpace(tok))
		if !found {
			s.metrics.authFailure()
			limitedLog(s.log(), s.noisy, slog.LevelInfo, "unknown token", "remote", r.RemoteAddr, "path", r.URL.Path)
			writeProblem(w, r, http.StatusUnauthorized, ProblemUnauthorized, "the bearer token is not known")
			return
		}
		h(w, r, &caller{token: t, tenant: s.tenants[t.Tenant]})
	})
}

// recorder logs each request (by token id, never the token) and counts
// it.
func (s *Server) recorder(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		s.metrics.request(sw.status)
		s.log().Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status,
			"duration_ms", float64(time.Since(start).Microseconds())/1000, "remote", r.RemoteAddr)
	})
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
