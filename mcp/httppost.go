package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"
)

// CodeHeaderMismatch is the 2026-07-28 error for a request whose mirrored
// HTTP headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name) are missing or
// do not match its body.
const CodeHeaderMismatch = -32020

// peeked is what the transport reads of a message before it is handled:
// enough to route it and to check the headers that mirror it. The message
// is then handled as Serve handles a line, which checks it in full.
type peeked struct {
	batch      bool
	valid      bool // one JSON object with a string method, or a response
	id         json.RawMessage
	method     string
	request    bool   // has an id and a method
	name       string // params.name, or params.uri, when a string
	hasName    bool
	version    string // params._meta's protocol version, when a string
	hasVersion bool
}

func peek(body []byte) peeked {
	t := bytes.TrimLeft(body, " \t\r\n")
	if isBatch(t) {
		return peeked{batch: true}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Params *struct {
			Name json.RawMessage            `json:"name"`
			URI  json.RawMessage            `json:"uri"`
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &m) != nil {
		return peeked{}
	}
	id, _ := checkID(m.ID) // an id of the wrong type is named by the dispatcher
	p := peeked{valid: true, id: id}
	if m.Method == nil {
		return p // a response, or an invalid message the dispatcher names
	}
	p.method, p.request = *m.Method, len(m.ID) > 0
	if m.Params == nil {
		return p
	}
	raw := m.Params.Name
	if p.method == "resources/read" {
		raw = m.Params.URI
	}
	p.hasName = json.Unmarshal(raw, &p.name) == nil && len(raw) > 0
	if v, ok := m.Params.Meta[metaProtocolVersion]; ok {
		p.hasVersion = json.Unmarshal(v, &p.version) == nil
	}
	return p
}

// post handles a POST: one JSON-RPC message (or a batch, in a 2025-03-26
// session) in the body.
func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.refuse(w, http.StatusUnsupportedMediaType, httpRefusal{}, errorf(CodeInvalidRequest, "%s", "unsupported media type: the body must be one JSON-RPC message with Content-Type: application/json"))
		return
	}
	wantJSON, wantSSE := accepts(r.Header.Values("Accept"))
	if !wantJSON && !wantSSE {
		h.refuse(w, http.StatusNotAcceptable, httpRefusal{}, errorf(CodeInvalidRequest, "%s", "not acceptable: the Accept header must list application/json or text/event-stream"))
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	p := peek(body)
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		h.refuse(w, http.StatusBadRequest, httpRefusal{size: len(body)}, errorf(CodeInvalidRequest, "%s", "invalid request: the body is empty"))
	case !p.batch && !p.valid:
		// Not routable: the dispatcher says precisely what is wrong.
		h.answer(w, r, body, &session{inflight: map[string]context.CancelFunc{}}, h.ctx, false, false)
	case r.Header.Get(headerProtocolVersion) == VersionStateless || p.hasVersion:
		h.postStateless(w, r, body, p)
	default:
		h.postSession(w, r, body, p, wantJSON, wantSSE)
	}
}

// postStateless handles a 2026-07-28 message: no session, every request
// self-contained, its mirrored headers checked against its body.
func (h *HTTPHandler) postStateless(w http.ResponseWriter, r *http.Request, body []byte, p peeked) {
	if p.batch {
		h.refuse(w, http.StatusBadRequest, httpRefusal{id: p.id, method: p.method, size: len(body)}, errorf(CodeInvalidRequest, "%s", "invalid request: protocol revision "+VersionStateless+" has no batches"))
		return
	}
	if msg := mirrorMismatch(r.Header, p); msg != "" {
		h.refuse(w, http.StatusBadRequest, httpRefusal{id: p.id, method: p.method, size: len(body)}, errorf(CodeHeaderMismatch, "%s", "header mismatch: "+msg))
		return
	}
	sess := &session{inflight: map[string]context.CancelFunc{}, pool: h.pool}
	wantJSON, wantSSE := accepts(r.Header.Values("Accept"))
	h.answer(w, r, body, sess, h.ctx, true, sseFor(p, wantJSON, wantSSE))
}

// postSession handles a message of a handshake revision: initialize makes
// a session, every other message names one with Mcp-Session-Id.
func (h *HTTPHandler) postSession(w http.ResponseWriter, r *http.Request, body []byte, p peeked, wantJSON, wantSSE bool) {
	hv := r.Header.Get(headerProtocolVersion)
	if hv != "" && !slices.Contains(legacyVersions, hv) {
		e := errorf(CodeInvalidRequest, "bad request: unsupported MCP-Protocol-Version %q", oneLine(hv, 64))
		e.Data = map[string]any{"requested": hv, "supported": supportedVersions()}
		h.refuse(w, http.StatusBadRequest, httpRefusal{id: p.id, method: p.method, size: len(body)}, e)
		return
	}
	initialize := !p.batch && p.request && p.method == "initialize"
	var hs *httpSession
	if initialize {
		var err error
		if hs, err = h.newSession(); err != nil {
			w.Header().Set("Retry-After", "60")
			h.refuse(w, http.StatusServiceUnavailable, httpRefusal{id: p.id, method: p.method, size: len(body)}, errorf(CodeServerBusy, "%s", err.Error()))
			return
		}
	} else {
		id := r.Header.Get(headerSessionID)
		if id == "" {
			h.refuse(w, http.StatusBadRequest, httpRefusal{id: p.id, method: p.method, size: len(body)}, errorf(CodeInvalidRequest, "%s", "bad request: no Mcp-Session-Id header; send initialize first and then the session id it returned with every request"))
			return
		}
		if hs = h.acquire(id); hs == nil {
			h.refuse(w, http.StatusNotFound, httpRefusal{id: p.id, method: p.method, size: len(body)}, errorf(CodeInvalidRequest, "%s", "session not found: it ended, expired or never existed; send initialize to start a new one"))
			return
		}
		hs.sess.mu.Lock()
		negotiated := hs.sess.version
		hs.sess.mu.Unlock()
		if msg := versionHeaderProblem(hv, negotiated); msg != "" {
			h.release(hs, false)
			h.refuse(w, http.StatusBadRequest, httpRefusal{id: p.id, method: p.method, size: len(body), sess: hs.sess}, errorf(CodeInvalidRequest, "%s", "bad request: "+msg))
			return
		}
	}
	drop := false
	defer func() { h.release(hs, drop) }()
	before := func() {}
	if initialize {
		before = func() {
			hs.sess.mu.Lock()
			ok := hs.sess.version != ""
			hs.sess.mu.Unlock()
			if ok {
				w.Header().Set(headerSessionID, hs.id)
			} else {
				drop = true // a failed initialize leaves no session behind
			}
		}
	}
	h.answer(w, r, body, hs.sess, hs.ctx, false, sseFor(p, wantJSON, wantSSE), before)
}

// versionHeaderProblem checks the MCP-Protocol-Version header hv of a
// request in a session that negotiated revision negotiated: required from
// 2025-06-18 on (the revision that defined it), equal to it when given.
func versionHeaderProblem(hv, negotiated string) string {
	switch {
	case hv == "" && negotiated != "" && revision(negotiated).has("2025-06-18"):
		return fmt.Sprintf("no MCP-Protocol-Version header; protocol revision %s requires it on every request after initialize", negotiated)
	case hv != "" && negotiated != "" && hv != negotiated:
		return fmt.Sprintf("MCP-Protocol-Version %q differs from the revision the session negotiated, %s", oneLine(hv, 64), negotiated)
	}
	return ""
}

// mirrorMismatch checks the headers of a 2026-07-28 request that mirror
// its body, as the transport requires of a server that reads the body.
func mirrorMismatch(hdr http.Header, p peeked) string {
	hv := hdr.Get(headerProtocolVersion)
	switch {
	case hv == "":
		return "no MCP-Protocol-Version header"
	case !p.hasVersion:
		return fmt.Sprintf("MCP-Protocol-Version is %q but params._meta names no protocol version", oneLine(hv, 64))
	case hv != p.version:
		return fmt.Sprintf("MCP-Protocol-Version %q differs from params._meta's %q", oneLine(hv, 64), oneLine(p.version, 64))
	case !p.request:
		return "" // notifications: the revision defines no header for them
	}
	if m := hdr.Get(headerMethod); m != p.method {
		if m == "" {
			return "no Mcp-Method header"
		}
		return fmt.Sprintf("Mcp-Method %q differs from the body's method %q", oneLine(m, 64), oneLine(p.method, 64))
	}
	switch p.method {
	case "tools/call", "resources/read", "prompts/get":
	default:
		return ""
	}
	raw := hdr.Get(headerName)
	if raw == "" {
		return "no Mcp-Name header"
	}
	name, ok := decodeHeaderValue(raw)
	if !ok {
		return "Mcp-Name is not valid =?base64?...?= encoding"
	}
	if !p.hasName || name != p.name {
		return fmt.Sprintf("Mcp-Name %q differs from the body's %q", oneLine(name, 100), oneLine(p.name, 100))
	}
	return ""
}

// decodeHeaderValue decodes the Base64 sentinel form "=?base64?...?="
// of a mirrored header value; any other value is itself.
func decodeHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	return string(b), err == nil
}

// accepts reads Accept headers: whether a JSON answer, an SSE stream or
// both may be sent. No Accept header at all takes JSON.
func accepts(values []string) (json, sse bool) {
	if len(values) == 0 {
		return true, false
	}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil || params["q"] == "0" {
				continue
			}
			switch mt {
			case "*/*":
				json, sse = true, true
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				sse = true
			}
		}
	}
	return json, sse
}

// sseFor says whether to answer as an SSE stream: when the client takes
// nothing else, and for tools/call, whose run may last minutes: the stream
// carries keep-alive comments meanwhile, so that proxies do not close an
// idle connection.
func sseFor(p peeked, wantJSON, wantSSE bool) bool {
	return wantSSE && (!wantJSON || p.request && p.method == "tools/call")
}

// answer handles body as Serve handles one line, with the session sess
// (canceled with life, and when the client goes away), and writes the
// response: an SSE stream when sse, else the JSON message (202 without a
// body when there is none: notifications). before runs once the message
// is handled, just before the status is written; with it, an SSE answer
// is held until then too (initialize: its session header goes first).
func (h *HTTPHandler) answer(w http.ResponseWriter, r *http.Request, body []byte, sess *session, life context.Context, stateless, sse bool, before ...func()) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(life, cancel)()
	streamNow := sse && len(before) == 0
	var sink interface {
		Write([]byte) (int, error)
	}
	buf := &bytes.Buffer{}
	if streamNow {
		stream := startSSE(w, defaultSSEKeepAlive)
		defer stream.stop()
		sink = stream
	} else {
		sink = buf
	}
	c := &conn{s: h.s, ctx: ctx, sess: sess}
	c.out = newWriter(sink, h.s.budget, cancel)
	c.message(body)
	c.wg.Wait()
	if err := c.out.close(); err != nil {
		h.s.logf("http: writing a response: %v", err)
	}
	if streamNow {
		return
	}
	for _, f := range before {
		f()
	}
	resp := buf.Bytes()
	switch {
	case len(resp) == 0:
		w.WriteHeader(http.StatusAccepted)
	case sse:
		stream := startSSE(w, defaultSSEKeepAlive)
		stream.Write(resp)
		stream.stop()
	default:
		// Without a deadline a client that does not read would hold
		// the request slot, and Close, for ever.
		rc := http.NewResponseController(w)
		rc.SetWriteDeadline(time.Now().Add(h.writeTimeout))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(statusOf(resp, stateless))
		w.Write(resp)
		rc.Flush()
		rc.SetWriteDeadline(time.Time{}) // the connection may serve the next request
	}
}

// statusOf is the HTTP status of a JSON answer: 200, but 400 for a
// message that could not be read as a request (an error without an id),
// and, in 2026-07-28, the statuses that revision gives its errors.
func statusOf(resp []byte, stateless bool) int {
	if resp[0] == '[' {
		return http.StatusOK
	}
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *rpcError       `json:"error"`
	}
	if json.Unmarshal(resp, &m) != nil || m.Error == nil {
		return http.StatusOK
	}
	if string(m.ID) == "null" {
		return http.StatusBadRequest
	}
	if stateless {
		switch m.Error.Code {
		case CodeMethodNotFound:
			return http.StatusNotFound
		case CodeUnsupportedVersion, CodeHeaderMismatch:
			return http.StatusBadRequest
		}
	}
	return http.StatusOK
}

// httpRefusal is what the transport knows of a message it refuses before
// dispatch, for its record: the id and method as far as they were read,
// its size, the session whose client sent it (nil when none).
type httpRefusal struct {
	id     json.RawMessage
	method string
	size   int
	sess   *session
}

// refuse answers with status and the JSON-RPC error e (id null when
// unknown) and writes the refused-request record a stdio server writes
// for a message it refuses before dispatch (rate-capped: Server.refused).
func (h *HTTPHandler) refuse(w http.ResponseWriter, status int, m httpRefusal, e *rpcError) {
	h.s.refused(m.sess, m.id, m.method, m.size, e)
	writeRPCError(w, status, m.id, e)
}

// writeRPCError answers with status and the JSON-RPC error e.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *rpcError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(encodeOrError(id, nil, e))
}
