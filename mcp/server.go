package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// Keys of a 2026-07-28 request's params._meta.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
)

// maxInFlight caps the requests being handled at once: each holds a
// goroutine. Their bytes are bounded by Config.MaxBufferedBytes, runs by
// Config.MaxRuns.
const maxInFlight = 256

// clientInfo is the client's implementation name and version.
type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// callInfo is what a handler knows about the request it serves.
type callInfo struct {
	id        json.RawMessage
	stateless bool     // a 2026-07-28 request (protocol version in _meta)
	rev       revision // the revision the answer is shaped for
	client    clientInfo
	pool      *run.Pool    // the connection's pre-started init processes; nil without
	serve     *audit.Serve // whom the request acts for (WithAttribution); nil without
}

// Serve reads requests from r and writes responses to w until r reaches
// EOF, a read fails or ctx is canceled. Requests are handled concurrently;
// tools/call runs are bounded by Config.MaxRuns. When Serve returns, every
// run it started has been stopped (its context canceled) and waited for, so
// no sandboxed process is left behind.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) (err error) {
	sess := &session{inflight: map[string]context.CancelFunc{}}
	if s.cfg.Prestart > 0 {
		// Deferred first, so closed last, once every run has ended: the
		// init processes still waiting are killed, none is left behind.
		pool, perr := s.newPool()
		if perr != nil {
			return perr
		}
		defer s.closePool(pool)
		sess.pool = pool
	}
	ctx, cancelAll := context.WithCancel(ctx)
	c := &conn{s: s, ctx: ctx, sess: sess, out: newWriter(w, s.budget, cancelAll)}
	defer func() {
		cancelAll()
		c.wg.Wait()
		s.refusals.Flush() // what the rate cap held back gets its record now
		s.cleanups.Wait()
		if werr := c.out.close(); werr != nil && err == nil {
			err = fmt.Errorf("writing responses: %w", werr)
		}
	}()
	return c.serve(r)
}

// closePool kills the pool's waiting init processes and logs what it did.
func (s *Server) closePool(pool *run.Pool) {
	pool.Close()
	st := pool.Stats()
	s.logf("pre-started init processes: %d started, %d used (%d with the root built ahead), %d runs started their own, %d expired, %d found dead",
		st.Started, st.Taken, st.Prebuilt, st.Missed, st.Expired, st.Died)
	if gv := pool.GVisorStats(); gv.Started > 0 {
		s.logf("pre-started gVisor sandboxes: %d started, %d used, %d gvisor runs started their own, %d expired, %d found dead",
			gv.Started, gv.Taken, gv.Missed, gv.Expired, gv.Died)
	}
}

// conn is one connection being served: the requests it reads are handled
// under ctx, canceled when Serve ends, and answered through out.
type conn struct {
	s    *Server
	ctx  context.Context
	sess *session
	out  *writer
	wg   sync.WaitGroup // the requests being handled
}

// serve reads r line by line and handles each message until EOF, a read
// error or the end of c.ctx.
func (c *conn) serve(r io.Reader) error {
	lines := make(chan lineOrErr)
	go readLines(newLineReader(r, c.s.maxMessage), lines, c.ctx.Done())
	for {
		var item lineOrErr
		select {
		case <-c.ctx.Done():
			if werr := c.out.writeErr(); werr != nil {
				return fmt.Errorf("writing responses: %w", werr)
			}
			return c.ctx.Err()
		case item = <-lines:
		}
		switch {
		case errors.Is(item.err, io.EOF):
			return nil
		case errors.Is(item.err, errTooLong):
			c.s.logf("dropped a message over %d bytes", c.s.maxMessage)
			e := errorf(CodeInvalidRequest, "invalid request: the message exceeds %d bytes", c.s.maxMessage)
			c.s.refused(c.sess, nil, "", c.s.maxMessage+1, e)
			c.reply(nil, nil, e)
			continue
		case item.err != nil:
			return fmt.Errorf("reading requests: %w", item.err)
		}
		c.message(item.line)
	}
}

// message handles one line: a batch, a notification or a request.
func (c *conn) message(line []byte) {
	if len(line) == 0 {
		return
	}
	if isBatch(line) {
		c.s.serveBatch(c.ctx, c.sess, line, c.out, c.accept)
		return
	}
	req, id, perr := parseMessage(line)
	if perr != nil {
		c.s.refused(c.sess, id, methodOf(line), len(line), perr)
		c.reply(id, nil, perr)
		return
	}
	if req == nil {
		return
	}
	if req.ID == nil {
		c.s.notification(c.sess, req)
		return
	}
	size := len(line)
	line = nil // not kept while the request is handled
	c.accept(req, size, false, c.single)
}

// reply answers from the read loop. Its message is charged when queued;
// when the budget is exhausted (a client that does not read) it waits,
// and the loop stops reading: backpressure, not memory.
func (c *conn) reply(id json.RawMessage, result any, e *rpcError) {
	c.out.reply(id, result, e, 0, c.ctx.Done())
}

// single sends the response of a request that came alone (a respondFunc).
func (c *conn) single(id json.RawMessage, result any, e *rpcError, charged int64, answer bool) {
	if !answer {
		c.s.budget.release(charged)
		return
	}
	// A write error cancels everything (the writer's onError): nobody
	// can read results any more.
	c.out.reply(id, result, e, charged, c.ctx.Done())
}

// accept handles one request whose message was size bytes, alone or in a
// batch; its response goes to respond, exactly once.
func (c *conn) accept(req *request, size int, inBatch bool, respond respondFunc) {
	if req.Method != "initialize" {
		c.start(req, size, respond)
		return
	}
	if inBatch {
		e := errorf(CodeInvalidRequest, "invalid request: initialize must not be part of a batch")
		c.s.refused(c.sess, req.ID, req.Method, size, e)
		respond(req.ID, nil, e, 0, true)
		return
	}
	// Answered in order, so that requests read after it see the client
	// it names.
	result, rerr := c.s.handle(c.ctx, c.sess, req)
	respond(req.ID, result, rerr, 0, true)
}

// start handles req in a goroutine of its own once its bytes are charged
// to the budget and its id is registered; a request refused for either
// is answered at once.
func (c *conn) start(req *request, size int, respond respondFunc) {
	s := c.s
	// The request's bytes and a bound on its response are charged until
	// the response is written; over the budget it is refused.
	cost := int64(size) + s.reserveFor(req)
	if !s.budget.tryAcquire(cost) {
		used, _, _ := s.budget.stats()
		e := errorf(CodeServerBusy, "server busy: %d bytes of requests and responses are buffered, and this request needs %d more than the limit of %d allows; retry when earlier responses have been read", used, cost, s.budget.max)
		s.refused(c.sess, req.ID, req.Method, size, e)
		respond(req.ID, nil, e, 0, true)
		return
	}
	key := string(req.ID)
	reqCtx, cancel, ok := c.sess.start(c.ctx, key)
	if !ok || reqCtx == nil {
		s.budget.release(cost)
		e := errorf(CodeServerBusy, "server busy: %d requests in progress", maxInFlight)
		if !ok {
			e = errorf(CodeInvalidRequest, "invalid request: id %s is already in use by a request in progress", key)
		}
		s.refused(c.sess, req.ID, req.Method, size, e)
		respond(req.ID, nil, e, 0, true)
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer c.sess.finish(key, cancel)
		result, rerr := s.handle(reqCtx, c.sess, req)
		// Canceled by notifications/cancelled (not by the server's end):
		// no response.
		respond(req.ID, result, rerr, cost, reqCtx.Err() == nil || c.ctx.Err() != nil)
	}()
}

// respondFunc takes the response of one request: to the writer for a
// message alone, to its batch for a member of a batch. charged is what
// the request reserved; answer is false for a request the client
// cancelled, which gets no response (the spec asks for none) but gives its
// reservation back all the same.
type respondFunc func(id json.RawMessage, result any, e *rpcError, charged int64, answer bool)

type lineOrErr struct {
	line []byte
	err  error
}

// readLines feeds lines to ch until an error (which it sends last) or done.
func readLines(lr *lineReader, ch chan<- lineOrErr, done <-chan struct{}) {
	for {
		line, err := lr.next()
		select {
		case ch <- lineOrErr{line, err}:
		case <-done:
			return
		}
		if err != nil && !errors.Is(err, errTooLong) {
			return
		}
	}
}

// notification handles a message without an id. Errors are never sent for
// notifications (JSON-RPC forbids replying to them); they are logged.
func (s *Server) notification(sess *session, req *request) {
	switch req.Method {
	case "notifications/initialized":
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if err := json.Unmarshal(orEmpty(req.Params), &p); err != nil || len(p.RequestID) == 0 {
			s.logf("notifications/cancelled without a usable requestId")
			return
		}
		id, err := checkID(p.RequestID)
		if err != nil {
			s.logf("notifications/cancelled: %v", err.Message)
			return
		}
		if sess.cancel(string(id)) {
			s.logf("request %s cancelled by the client (%s)", id, oneLine(p.Reason, 200))
		}
	default:
		if len(req.Method) > 200 {
			req.Method = req.Method[:200] + "..."
		}
		s.logf("ignored notification %q", req.Method)
	}
}

// handle answers one request. A request it refuses (a JSON-RPC error)
// gets a refused-request record; a tool call that reached its tool has
// the tool's own record instead.
func (s *Server) handle(ctx context.Context, sess *session, req *request) (any, *rpcError) {
	result, rerr := s.dispatch(ctx, sess, req)
	if rerr != nil {
		s.refused(sess, req.ID, req.Method, req.size, rerr)
	}
	return result, rerr
}

// dispatch answers one request by its method.
func (s *Server) dispatch(ctx context.Context, sess *session, req *request) (any, *rpcError) {
	info, rerr := s.callInfo(sess, req)
	if rerr != nil {
		return nil, rerr
	}
	info.serve = attributionOf(ctx)
	var result map[string]any
	switch req.Method {
	case "initialize":
		result, rerr = s.initialize(sess, req)
	case "server/discover":
		result = s.discover()
	case "ping":
		result = map[string]any{}
	case "tools/list":
		result = s.listTools(info.rev)
	case "tools/call":
		result, rerr = s.callTool(ctx, info, req)
		if rerr == nil && !info.rev.has(sinceStructured) {
			// The text content carries the same JSON.
			delete(result, "structuredContent")
		}
	default:
		var ok bool
		if result, rerr, ok = s.extensionMethod(info, req); ok {
			break
		}
		m := req.Method
		if len(m) > 200 {
			m = m[:200] + "..."
		}
		return nil, errorf(CodeMethodNotFound, "method not found: %q", m)
	}
	if rerr != nil {
		return nil, rerr
	}
	if info.stateless {
		result["resultType"] = "complete"
	}
	return result, nil
}

// callInfo decides the era of a request: a 2026-07-28 request carries its
// protocol version and client capabilities in params._meta; any other
// request belongs to the handshake revisions.
func (s *Server) callInfo(sess *session, req *request) (callInfo, *rpcError) {
	info := callInfo{id: req.ID, pool: sess.pool}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(orEmpty(req.Params), &p); err != nil {
		return info, errorf(CodeInvalidParams, "invalid params: _meta: %v", err)
	}
	rawVersion, stateless := p.Meta[metaProtocolVersion]
	if !stateless {
		sess.mu.Lock()
		info.client = sess.client
		info.rev = revision(sess.version)
		sess.mu.Unlock()
		if info.rev == "" {
			// Before initialize: the newest handshake revision.
			info.rev = VersionLegacy
		}
		return info, nil
	}
	info.stateless, info.rev = true, VersionStateless
	var version string
	if err := json.Unmarshal(rawVersion, &version); err != nil {
		return info, errorf(CodeInvalidParams, "invalid params: _meta[%q] must be a string", metaProtocolVersion)
	}
	if version != VersionStateless {
		e := errorf(CodeUnsupportedVersion, "unsupported protocol version %q", oneLine(version, 64))
		e.Data = map[string]any{"requested": version, "supported": supportedVersions()}
		return info, e
	}
	var caps map[string]json.RawMessage
	if raw, ok := p.Meta[metaClientCapabilities]; !ok || json.Unmarshal(raw, &caps) != nil || caps == nil {
		return info, errorf(CodeInvalidParams, "invalid params: _meta[%q] must be an object", metaClientCapabilities)
	}
	if raw, ok := p.Meta[metaClientInfo]; ok {
		if err := json.Unmarshal(raw, &info.client); err != nil {
			return info, errorf(CodeInvalidParams, "invalid params: _meta[%q]: %v", metaClientInfo, err)
		}
	}
	return info, nil
}

func supportedVersions() []string {
	return append([]string{VersionStateless}, legacyVersions...)
}

// initialize is the handshake of the revisions before 2026-07-28. A client
// asking for one of them gets it; a client asking for any other version
// (2026-07-28 has no handshake) gets the newest handshake version, as the
// spec's version negotiation says. Later answers on the connection are
// shaped for the negotiated revision; a second initialize is refused
// (-32600) and changes nothing.
func (s *Server) initialize(sess *session, req *request) (map[string]any, *rpcError) {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      clientInfo      `json:"clientInfo"`
	}
	if err := json.Unmarshal(orEmpty(req.Params), &p); err != nil {
		return nil, errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	if p.ProtocolVersion == "" {
		return nil, errorf(CodeInvalidParams, `invalid params: "protocolVersion" is required`)
	}
	version := VersionLegacy
	if slices.Contains(legacyVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	sess.mu.Lock()
	// One handshake per connection: a second one would change the
	// revision (and the client name in the records) under requests
	// already shaped for the first.
	if sess.version != "" {
		done := sess.version
		sess.mu.Unlock()
		return nil, errorf(CodeInvalidRequest, "invalid request: the connection is already initialized (protocol revision %s); initialize may be sent once per connection, open a new connection to negotiate again", done)
	}
	sess.client = p.ClientInfo
	sess.version = version
	sess.mu.Unlock()
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    capabilities(),
		"serverInfo":      s.serverInfo(revision(version)),
		"instructions":    instructions,
	}, nil
}

// discover is server/discover of 2026-07-28.
func (s *Server) discover() map[string]any {
	return map[string]any{
		"supportedVersions": supportedVersions(),
		"capabilities":      capabilities(),
		"serverInfo":        s.serverInfo(VersionStateless),
		"instructions":      instructions,
	}
}

// serverInfo is the server's Implementation object in revision rev.
func (s *Server) serverInfo(rev revision) map[string]any {
	info := map[string]any{"name": "skill-sandbox", "version": s.cfg.Version}
	if rev.has(sinceTitle) {
		info["title"] = "skill-sandbox"
	}
	if rev.has(sinceDescription) {
		info["description"] = "Agent Skills run in a kernel sandbox"
	}
	return info
}

const instructions = "Agent Skills served by skill-sandbox. Call list_skills, then read_skill for a skill's instructions and read_skill_file for its references. " +
	"run_skill_script runs one of a skill's scripts in a kernel sandbox; run_command runs a bash command line in the same sandbox. " +
	"With a workspace, write_workspace_file puts an input file into it and read_workspace_file reads an output back. " +
	"The operator's policy fixes what a run may read, write and reach; no argument can widen it."

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// logf writes one line to the server's log (stderr in the command).
func (s *Server) logf(format string, a ...any) {
	if s.cfg.Log == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, "skill-sandbox mcp: "+format+"\n", a...)
}

// oneLine shortens s to n bytes and replaces line breaks and every other
// control character (C0, DEL, C1) with a space, for log lines: names in
// them come from skill folders, whose authors may put escape sequences
// in them for the operator's terminal.
func oneLine(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f && r <= 0x9f {
			return ' '
		}
		return r
	}, s)
}
