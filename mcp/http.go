package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// Defaults of HTTPOptions.
const (
	DefaultMaxSessions  = 64
	DefaultSessionIdle  = 10 * time.Minute
	DefaultMaxRequests  = 256
	defaultSSEKeepAlive = 15 * time.Second
)

// Header names of the Streamable HTTP transport.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
)

// HTTPOptions configure the Streamable HTTP transport of Server.HTTPHandler.
type HTTPOptions struct {
	// AllowedOrigins are the browser origins ("http://localhost:6274",
	// scheme://host[:port], compared exactly) whose requests are served.
	// A request with any other Origin header is refused with 403: a web
	// page must not reach the server through the user's browser (DNS
	// rebinding). Requests without an Origin header, which browsers
	// always send on such requests, are served.
	AllowedOrigins []string

	// AllowedHosts, when not empty, are the host names (the Host header
	// without its port) served; a request naming another host is refused
	// with 403, the second half of the DNS-rebinding defence for a server
	// on a loopback address. Empty accepts any host.
	AllowedHosts []string

	// MaxSessions bounds the sessions of the handshake revisions held at
	// once; an initialize past it is refused with 503.
	// DefaultMaxSessions when zero.
	MaxSessions int

	// SessionIdle ends a session without requests for that long; its id
	// then gets 404. DefaultSessionIdle when zero.
	SessionIdle time.Duration

	// MaxRequests bounds the requests handled at once, over all sessions
	// and stateless requests; past it a request is refused with 503.
	// DefaultMaxRequests when zero.
	MaxRequests int

	// Pool, when set, holds the pre-started init processes the runs take,
	// shared with the caller's other users of it (a server with a handler
	// per tenant keeps one pool); Config.Prestart is then not used, and
	// Close leaves the pool to its owner.
	Pool *run.Pool
}

// HTTPHandler serves a Server over the MCP Streamable HTTP transport. Make
// one with Server.HTTPHandler and mount it on the MCP endpoint (such as
// "/mcp"); Close it when the HTTP server is done.
type HTTPHandler struct {
	s       *Server
	opts    HTTPOptions
	origins map[string]bool
	hosts   map[string]bool
	pool    *run.Pool // shared by every session; nil without Prestart
	ownPool bool      // started here, closed by Close
	slots   chan struct{}
	now     func() time.Time
	// bodyTimeout is bodyTimeout; tests shorten it.
	bodyTimeout time.Duration
	// writeTimeout is writeTimeout; tests shorten it.
	writeTimeout time.Duration
	refusals     atomic.Int64 // requests refused for their Origin or Host

	ctx    context.Context // canceled by Close: ends every session
	cancel context.CancelFunc
	wg     sync.WaitGroup // requests in progress

	mu       sync.Mutex
	closed   bool
	sessions map[string]*httpSession
}

// httpSession is one session of a handshake revision: the state of
// session plus what bounds its life.
type httpSession struct {
	id     string
	sess   *session
	ctx    context.Context // canceled when the session ends
	cancel context.CancelFunc
	// Guarded by HTTPHandler.mu.
	active   int       // requests in progress
	lastUsed time.Time // start or end of the last request
}

// HTTPHandler returns an http.Handler serving s over the Streamable HTTP
// transport of every revision Serve speaks: sessions (Mcp-Session-Id) for
// the handshake revisions, one self-contained POST per request for
// 2026-07-28. The same tools and records as Serve; its init processes
// (Config.Prestart) are started here and shared by every session.
func (s *Server) HTTPHandler(opts HTTPOptions) (*HTTPHandler, error) {
	if opts.MaxSessions < 0 || opts.SessionIdle < 0 || opts.MaxRequests < 0 {
		return nil, errors.New("negative limit in the HTTP options")
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.SessionIdle == 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.MaxRequests == 0 {
		opts.MaxRequests = DefaultMaxRequests
	}
	h := &HTTPHandler{
		s: s, opts: opts,
		origins:      map[string]bool{},
		hosts:        map[string]bool{},
		slots:        make(chan struct{}, opts.MaxRequests),
		now:          time.Now,
		bodyTimeout:  bodyTimeout,
		writeTimeout: writeTimeout,
		sessions:     map[string]*httpSession{},
	}
	for _, o := range opts.AllowedOrigins {
		h.origins[o] = true
	}
	for _, host := range opts.AllowedHosts {
		h.hosts[host] = true
	}
	switch {
	case opts.Pool != nil:
		h.pool = opts.Pool
	case s.cfg.Prestart > 0:
		pool, err := s.newPool()
		if err != nil {
			return nil, err
		}
		h.pool, h.ownPool = pool, true
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h, nil
}

// Close ends every session, stops the runs in progress, waits for the
// requests being handled and for their sandboxes to be torn down, and
// kills the waiting init processes it started (not those of
// HTTPOptions.Pool). Requests after Close get 503.
func (h *HTTPHandler) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.sessions = map[string]*httpSession{}
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
	h.s.refusals.Flush() // what the rate cap held back gets its record now
	h.s.cleanups.Wait()
	if h.ownPool {
		h.s.closePool(h.pool)
	}
	return nil
}

// ServeHTTP answers one HTTP request to the MCP endpoint.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if msg := h.refusedOrigin(r); msg != "" {
		h.logRefusal(msg)
		h.refuse(w, http.StatusForbidden, httpRefusal{}, errorf(CodeInvalidRequest, "%s", "forbidden: "+msg))
		return
	}
	allowCORS(w, r)
	switch r.Method {
	case http.MethodPost:
	case http.MethodOptions:
		if r.Header.Get("Origin") != "" {
			preflight(w)
			return
		}
		w.Header().Set("Allow", "POST, DELETE")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, errorf(CodeInvalidRequest, "method OPTIONS not allowed: send JSON-RPC messages with POST, end a session with DELETE"))
		return
	case http.MethodDelete:
		h.delete(w, r)
		return
	default:
		// No stream of server-initiated messages: the server sends none
		// (2025-03-26 to 2025-11-25 allow 405; 2026-07-28 has no GET).
		// Not recorded: every client of 2025-03-26 to 2025-11-25 tries
		// the GET stream once, and 405 is the answer the spec gives it.
		w.Header().Set("Allow", "POST, DELETE")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, errorf(CodeInvalidRequest, "method %s not allowed: send JSON-RPC messages with POST, end a session with DELETE", oneLine(r.Method, 20)))
		return
	}
	if !h.enter() {
		w.Header().Set("Retry-After", "1")
		h.refuse(w, http.StatusServiceUnavailable, httpRefusal{}, errorf(CodeServerBusy, "server busy: %d requests in progress, or shutting down", h.opts.MaxRequests))
		return
	}
	defer h.leave()
	h.post(w, r)
}

// enter takes a request slot; it fails when all are taken or the handler
// is closed.
func (h *HTTPHandler) enter() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	select {
	case h.slots <- struct{}{}:
		h.wg.Add(1)
		return true
	default:
		return false
	}
}

func (h *HTTPHandler) leave() {
	<-h.slots
	h.wg.Done()
}

// newSession makes a session for an initialize, or fails when
// MaxSessions are held (after ending those idle too long).
func (h *HTTPHandler) newSession() (*httpSession, error) {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return nil, err
	}
	hs := &httpSession{
		id:   hex.EncodeToString(raw[:]),
		sess: &session{inflight: map[string]context.CancelFunc{}, pool: h.pool},
	}
	hs.ctx, hs.cancel = context.WithCancel(h.ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expire()
	if len(h.sessions) >= h.opts.MaxSessions {
		hs.cancel()
		return nil, fmt.Errorf("server busy: %d sessions are open, the most this server keeps; end one with DELETE or retry when one has been idle for %v", len(h.sessions), h.opts.SessionIdle)
	}
	hs.active, hs.lastUsed = 1, h.now()
	h.sessions[hs.id] = hs
	return hs, nil
}

// expire ends the sessions idle for longer than SessionIdle. h.mu is held.
func (h *HTTPHandler) expire() {
	now := h.now()
	for id, hs := range h.sessions {
		if hs.active == 0 && now.Sub(hs.lastUsed) > h.opts.SessionIdle {
			delete(h.sessions, id)
			hs.cancel()
		}
	}
}

// acquire finds the session id and marks a request in progress on it;
// nil when there is no such session (never was, ended, expired).
func (h *HTTPHandler) acquire(id string) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.expire()
	hs := h.sessions[id]
	if hs != nil {
		hs.active++
		hs.lastUsed = h.now()
	}
	return hs
}

// release ends a request on hs; drop also ends the session (an
// initialize that failed).
func (h *HTTPHandler) release(hs *httpSession, drop bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hs.active--
	hs.lastUsed = h.now()
	if drop && h.sessions[hs.id] == hs {
		delete(h.sessions, hs.id)
		hs.cancel()
	}
}

// delete ends the session named by the request's Mcp-Session-Id: its
// requests in progress are canceled and its id gets 404 from then on.
func (h *HTTPHandler) delete(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(headerProtocolVersion) == VersionStateless {
		w.Header().Set("Allow", "POST")
		h.refuse(w, http.StatusMethodNotAllowed, httpRefusal{}, errorf(CodeInvalidRequest, "%s", "protocol revision "+VersionStateless+" has no sessions to end"))
		return
	}
	id := r.Header.Get(headerSessionID)
	if id == "" {
		h.refuse(w, http.StatusBadRequest, httpRefusal{}, errorf(CodeInvalidRequest, "%s", "bad request: DELETE needs the Mcp-Session-Id header of the session to end"))
		return
	}
	h.mu.Lock()
	hs := h.sessions[id]
	if hs != nil {
		delete(h.sessions, id)
	}
	h.mu.Unlock()
	if hs == nil {
		h.refuse(w, http.StatusNotFound, httpRefusal{}, errorf(CodeInvalidRequest, "%s", "session not found: it ended or never existed; send initialize to start a new one"))
		return
	}
	hs.cancel()
	w.WriteHeader(http.StatusNoContent)
}

// bodyTimeout bounds the time a request's body may take to arrive: a body
// sent slowly must not hold a request slot for long.
const bodyTimeout = time.Minute

// writeTimeout bounds the time an answer's write may wait for a client
// that does not read it: a client that never reads must not hold a
// request slot, or Close, for ever.
const writeTimeout = time.Minute

// readBody reads the request's body, at most the server's message limit,
// within bodyTimeout. Once the body is read the deadline is lifted, so
// that it cannot end a run that lasts longer (net/http lifts it too when
// its background read starts; this does not rely on that). After a failed
// read it stays, so that net/http gives up reading the rest of the body
// and sends the error instead of waiting for it.
func (h *HTTPHandler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(h.bodyTimeout)) // ErrNotSupported: no deadline
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(h.s.maxMessage)))
	if err == nil {
		rc.SetReadDeadline(time.Time{})
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.s.logf("http: dropped a message over %d bytes", h.s.maxMessage)
		h.refuse(w, http.StatusRequestEntityTooLarge, httpRefusal{size: h.s.maxMessage + 1}, errorf(CodeInvalidRequest, "invalid request: the message exceeds %d bytes", h.s.maxMessage))
		return nil, false
	case err != nil:
		h.refuse(w, http.StatusBadRequest, httpRefusal{}, errorf(CodeInvalidRequest, "%s", "bad request: reading the body: "+oneLine(err.Error(), 200)))
		return nil, false
	}
	return body, true
}

// refusedOrigin says why the request's Origin or Host is refused, or ""
// when both are allowed.
func (h *HTTPHandler) refusedOrigin(r *http.Request) string {
	switch origins := r.Header.Values("Origin"); {
	case len(origins) > 1:
		return "more than one Origin header"
	case len(origins) == 1 && !h.origins[origins[0]]:
		return fmt.Sprintf("Origin %q is not allowed (a browser page of another site; the operator may allow an origin)", oneLine(origins[0], 100))
	}
	if len(h.hosts) == 0 {
		return ""
	}
	host := r.Host
	if hp, _, err := net.SplitHostPort(host); err == nil {
		host = hp
	}
	host = strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if !h.hosts[host] {
		return fmt.Sprintf("Host %q is not served here (a DNS name rebound to this address?)", oneLine(r.Host, 100))
	}
	return ""
}

// maxRefusalsLogged bounds the log lines of refused origins and hosts: a
// page that keeps trying must not fill the operator's log.
const maxRefusalsLogged = 10

func (h *HTTPHandler) logRefusal(msg string) {
	switch n := h.refusals.Add(1); {
	case n < maxRefusalsLogged:
		h.s.logf("http: refused a request: %s", msg)
	case n == maxRefusalsLogged:
		h.s.logf("http: refused a request: %s; further refusals of origins and hosts are not logged", msg)
	}
}
