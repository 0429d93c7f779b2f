package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// httpClient drives an HTTPHandler over a real loopback HTTP server.
type httpClient struct {
	t       testing.TB
	url     string
	session string
	version string // sent as MCP-Protocol-Version once set
	header  http.Header
}

// newHTTPServer serves a Server for the test skills over HTTP.
func newHTTPServer(t testing.TB, cfg Config, opts HTTPOptions) (*HTTPHandler, string) {
	t.Helper()
	if cfg.SkillDirs == nil {
		cfg.SkillDirs = []string{skillsDir(t)}
	}
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := srv.HTTPHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		h.Close()
	})
	return h, ts.URL
}

// post sends one message and returns the status, the headers and the
// JSON-RPC message of the answer (from the JSON body or the SSE stream).
func (c *httpClient) post(body string, hdr http.Header) (int, http.Header, map[string]any) {
	c.t.Helper()
	req, err := http.NewRequest("POST", c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set(headerSessionID, c.session)
	}
	if c.version != "" {
		req.Header.Set(headerProtocolVersion, c.version)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Header, readAnswer(c.t, resp)
}

// readAnswer reads the one message of a JSON or SSE answer; nil when the
// body is empty.
func readAnswer(t testing.TB, resp *http.Response) map[string]any {
	t.Helper()
	var data []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data == nil {
				data = []byte(d)
			}
		}
	} else {
		var err error
		if data, err = io.ReadAll(resp.Body); err != nil {
			t.Fatal(err)
		}
	}
	if len(data) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("answer %q: %v", data, err)
	}
	return m
}

// initialize starts a session of revision version.
func (c *httpClient) initialize(version string) {
	c.t.Helper()
	status, hdr, msg := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"go-http-test","version":"1"}}}`, nil)
	if status != 200 || dig(msg, "result", "protocolVersion") != version {
		c.t.Fatalf("initialize: %d %v", status, msg)
	}
	if c.session = hdr.Get(headerSessionID); len(c.session) != 32 {
		c.t.Fatalf("session id %q", c.session)
	}
	c.version = version
	if status, _, _ := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); status != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: %d", status)
	}
}

func TestHTTPSession(t *testing.T) {
	_, url := newHTTPServer(t, Config{}, HTTPOptions{})
	for _, version := range []string{"2025-03-26", "2025-06-18", VersionLegacy} {
		t.Run(version, func(t *testing.T) {
			c := &httpClient{t: t, url: url}
			c.initialize(version)
			status, _, msg := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil)
			if status != 200 || dig(msg, "result", "tools", 0, "name") != ToolListSkills {
				t.Fatalf("tools/list: %d %v", status, msg)
			}
			// tools/call is answered as an SSE stream.
			status, hdr, msg := c.post(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_skills","arguments":{}}}`, nil)
			if status != 200 || hdr.Get("Content-Type") != "text/event-stream" || dig(msg, "result", "isError") != false {
				t.Fatalf("tools/call: %d %v %v", status, hdr, msg)
			}
			if req, _ := http.NewRequest("DELETE", url, nil); req != nil {
				req.Header.Set(headerSessionID, c.session)
				resp, err := http.DefaultClient.Do(req)
				if err != nil || resp.StatusCode != http.StatusNoContent {
					t.Fatalf("DELETE: %v %v", resp, err)
				}
				resp.Body.Close()
			}
			if status, _, msg := c.post(`{"jsonrpc":"2.0","id":4,"method":"ping"}`, nil); status != http.StatusNotFound {
				t.Errorf("after DELETE: %d %v", status, msg)
			}
		})
	}
}

func TestHTTPBatch(t *testing.T) {
	_, url := newHTTPServer(t, Config{}, HTTPOptions{})
	c := &httpClient{t: t, url: url}
	c.initialize(VersionBatch)
	req, _ := http.NewRequest("POST", url, strings.NewReader(`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(headerSessionID, c.session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answers []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&answers); err != nil || resp.StatusCode != 200 || len(answers) != 2 {
		t.Fatalf("batch: %d %v %v", resp.StatusCode, answers, err)
	}
}

func TestHTTPStateless(t *testing.T) {
	_, url := newHTTPServer(t, Config{}, HTTPOptions{})
	meta, _ := json.Marshal(statelessMeta())
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_skills","arguments":{},"_meta":` + string(meta) + `}}`
	list := `{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":` + string(meta) + `}}`
	unknown := `{"jsonrpc":"2.0","id":9,"method":"nope/nothing","params":{"_meta":` + string(meta) + `}}`
	good := http.Header{headerMethod: {"tools/call"}, headerName: {"list_skills"}}
	for _, tc := range []struct {
		name   string
		body   string
		hdr    http.Header
		status int
		code   float64 // of the error; 0 for a result
	}{
		{"call", call, good, 200, 0},
		{"list", list, http.Header{headerMethod: {"tools/list"}}, 200, 0},
		{"name in base64", call, http.Header{headerMethod: {"tools/call"}, headerName: {"=?base64?bGlzdF9za2lsbHM=?="}}, 200, 0},
		{"session id ignored", list, http.Header{headerMethod: {"tools/list"}, headerSessionID: {"0123456789abcdef0123456789abcdef"}}, 200, 0},
		{"no version header", call, http.Header{headerMethod: {"tools/call"}, headerName: {"list_skills"}, headerProtocolVersion: {""}}, 400, CodeHeaderMismatch},
		{"other version header", call, http.Header{headerMethod: {"tools/call"}, headerName: {"list_skills"}, headerProtocolVersion: {"2025-11-25"}}, 400, CodeHeaderMismatch},
		{"no method header", call, http.Header{headerName: {"list_skills"}}, 400, CodeHeaderMismatch},
		{"method mismatch", call, http.Header{headerMethod: {"tools/list"}, headerName: {"list_skills"}}, 400, CodeHeaderMismatch},
		{"no name header", call, http.Header{headerMethod: {"tools/call"}}, 400, CodeHeaderMismatch},
		{"name mismatch", call, http.Header{headerMethod: {"tools/call"}, headerName: {"run_command"}}, 400, CodeHeaderMismatch},
		{"bad base64", call, http.Header{headerMethod: {"tools/call"}, headerName: {"=?base64?!!?="}}, 400, CodeHeaderMismatch},
		{"unknown method", unknown, http.Header{headerMethod: {"nope/nothing"}}, 404, CodeMethodNotFound},
		{"unsupported version", strings.ReplaceAll(list, VersionStateless, "2099-01-01"), http.Header{headerMethod: {"tools/list"}, headerProtocolVersion: {"2099-01-01"}}, 400, CodeUnsupportedVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &httpClient{t: t, url: url, version: VersionStateless}
			status, _, msg := c.post(tc.body, tc.hdr)
			if status != tc.status {
				t.Errorf("status %d, want %d: %v", status, tc.status, msg)
			}
			if code, _ := dig(msg, "error", "code").(float64); code != tc.code {
				t.Errorf("error code %v, want %v: %v", code, tc.code, msg)
			}
			if tc.code == 0 && dig(msg, "result", "resultType") != "complete" {
				t.Errorf("result %v", msg)
			}
		})
	}
}

// TestHTTPAttacks checks every defence of the transport: each case fails
// without it.
func TestHTTPAttacks(t *testing.T) {
	h, url := newHTTPServer(t, Config{MaxMessageBytes: 4096}, HTTPOptions{
		AllowedOrigins: []string{"http://localhost:6274"},
		AllowedHosts:   []string{"127.0.0.1", "localhost"},
		MaxSessions:    2,
	})
	_, otherURL := newHTTPServer(t, Config{}, HTTPOptions{}) // another tenant
	a := &httpClient{t: t, url: url}
	a.initialize("2025-06-18")
	ping := `{"jsonrpc":"2.0","id":5,"method":"ping"}`

	t.Run("foreign origin", func(t *testing.T) {
		if status, _, _ := a.post(ping, http.Header{"Origin": {"http://evil.example"}}); status != http.StatusForbidden {
			t.Errorf("status %d, want 403", status)
		}
		if status, _, _ := a.post(ping, http.Header{"Origin": {"http://localhost:6274"}}); status != 200 {
			t.Errorf("allowed origin: status %d", status)
		}
	})
	t.Run("rebound host", func(t *testing.T) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(ping))
		req.Host = "rebind.evil.example:80"
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("status %d, want 403", resp.StatusCode)
		}
	})
	t.Run("oversized body", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`
		if status, _, msg := a.post(body, nil); status != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want 413: %v", status, msg)
		}
	})
	t.Run("no version header", func(t *testing.T) {
		c := *a
		c.version = ""
		if status, _, msg := c.post(ping, nil); status != http.StatusBadRequest {
			t.Errorf("status %d, want 400: %v", status, msg)
		}
		c.version = "2025-11-25"
		if status, _, msg := c.post(ping, nil); status != http.StatusBadRequest {
			t.Errorf("other version: status %d, want 400: %v", status, msg)
		}
	})
	t.Run("forged session", func(t *testing.T) {
		c := *a
		c.session = strings.Repeat("0", 32)
		if status, _, _ := c.post(ping, nil); status != http.StatusNotFound {
			t.Errorf("status %d, want 404", status)
		}
		c.session = ""
		if status, _, _ := c.post(ping, nil); status != http.StatusBadRequest {
			t.Errorf("no session: status %d, want 400", status)
		}
	})
	t.Run("session of another tenant", func(t *testing.T) {
		c := *a
		c.url = otherURL
		if status, _, _ := c.post(ping, nil); status != http.StatusNotFound {
			t.Errorf("status %d, want 404", status)
		}
	})
	t.Run("session of another session", func(t *testing.T) {
		b := &httpClient{t: t, url: url}
		b.initialize("2025-06-18")
		// b ends its own session; a's goes on.
		req, _ := http.NewRequest("DELETE", url, nil)
		req.Header.Set(headerSessionID, b.session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if status, _, _ := a.post(ping, nil); status != 200 {
			t.Errorf("a after b ended: %d", status)
		}
	})
	t.Run("too many sessions", func(t *testing.T) {
		b := &httpClient{t: t, url: url}
		b.initialize("2025-06-18") // the second of 2
		c := &httpClient{t: t, url: url}
		status, hdr, msg := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`, nil)
		if status != http.StatusServiceUnavailable || hdr.Get(headerSessionID) != "" {
			t.Errorf("status %d, want 503: %v", status, msg)
		}
		// Idle sessions expire: then there is room again.
		h.mu.Lock()
		h.now = func() time.Time { return time.Now().Add(DefaultSessionIdle + time.Minute) }
		h.mu.Unlock()
		c.initialize("2025-06-18")
		if status, _, _ := a.post(ping, nil); status != http.StatusNotFound {
			t.Errorf("an expired session: status %d, want 404", status)
		}
	})
	t.Run("methods", func(t *testing.T) {
		for _, m := range []string{"GET", "PUT"} {
			req, _ := http.NewRequest(m, url, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s: %d, want 405", m, resp.StatusCode)
			}
		}
	})
	t.Run("content type", func(t *testing.T) {
		if status, _, _ := a.post(ping, http.Header{"Content-Type": {"text/plain"}}); status != http.StatusUnsupportedMediaType {
			t.Errorf("status %d, want 415", status)
		}
	})
}

// TestHTTPFailedInitialize checks that an initialize that fails leaves no
// session behind.
func TestHTTPFailedInitialize(t *testing.T) {
	h, url := newHTTPServer(t, Config{}, HTTPOptions{MaxSessions: 1})
	c := &httpClient{t: t, url: url}
	for range 3 {
		status, hdr, msg := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil)
		if status != 200 || hdr.Get(headerSessionID) != "" || dig(msg, "error", "code") != float64(CodeInvalidParams) {
			t.Fatalf("initialize without a version: %d %v %v", status, hdr, msg)
		}
	}
	h.mu.Lock()
	n := len(h.sessions)
	h.mu.Unlock()
	if n != 0 {
		t.Errorf("%d sessions left", n)
	}
}

// TestHTTPSSEKeepsConnection checks that the connection of an SSE answer
// is kept for the next request: the end of the stream must not leave a
// write deadline behind that breaks it.
func TestHTTPSSEKeepsConnection(t *testing.T) {
	_, url := newHTTPServer(t, Config{}, HTTPOptions{})
	c := &httpClient{t: t, url: url}
	c.initialize(VersionLegacy)
	for i := range 3 {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_skills","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set(headerSessionID, c.session)
		req.Header.Set(headerProtocolVersion, VersionLegacy)
		reused := false
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		}))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Header.Get("Content-Type") != "text/event-stream" || !reused {
			t.Errorf("call %d: %s, connection reused: %v", i, resp.Header.Get("Content-Type"), reused)
		}
	}
}

// TestHTTPSlowBody checks that a body that does not arrive gives its
// request slot back after the body timeout.
func TestHTTPSlowBody(t *testing.T) {
	h, url := newHTTPServer(t, Config{}, HTTPOptions{MaxRequests: 1})
	h.bodyTimeout = 200 * time.Millisecond
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d, want 400", resp.StatusCode)
	}
	// The one slot is free again, and a run that outlasts the body
	// timeout is not canceled by it: the deadline was lifted.
	c := &httpClient{t: t, url: url}
	c.initialize(VersionLegacy)
	status, _, msg := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_skill_script","arguments":{"skill":"probe","script":"sleep.sh","args":["1"]}}}`, nil)
	if status != 200 || dig(msg, "result", "isError") != false || dig(msg, "result", "structuredContent", "exit_code") != float64(0) {
		t.Errorf("a run of 1s: %d %v", status, msg)
	}
}

// TestHTTPSSEOnly checks a client that accepts only SSE: initialize still
// starts a session (its header before the stream), and every answer is a
// stream.
func TestHTTPSSEOnly(t *testing.T) {
	_, url := newHTTPServer(t, Config{}, HTTPOptions{})
	c := &httpClient{t: t, url: url, header: http.Header{"Accept": {"text/event-stream"}}}
	status, hdr, msg := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sse","version":"1"}}}`, nil)
	if status != 200 || hdr.Get("Content-Type") != "text/event-stream" || len(hdr.Get(headerSessionID)) != 32 || dig(msg, "result", "protocolVersion") != VersionLegacy {
		t.Fatalf("initialize: %d %v %v", status, hdr, msg)
	}
	c.session, c.version = hdr.Get(headerSessionID), VersionLegacy
	status, hdr, msg = c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, nil)
	if status != 200 || hdr.Get("Content-Type") != "text/event-stream" || dig(msg, "result", "tools", 0, "name") != ToolListSkills {
		t.Fatalf("tools/list: %d %v %v", status, hdr, msg)
	}
}

// TestHTTPCancelOtherSession checks that a session cannot cancel another
// session's request by naming its id, while it can cancel its own.
func TestHTTPCancelOtherSession(t *testing.T) {
	h, url := newHTTPServer(t, Config{}, HTTPOptions{})
	a := &httpClient{t: t, url: url}
	a.initialize(VersionLegacy)
	// started waits until a's request id is in progress.
	started := func(id string) {
		for range 1000 {
			h.mu.Lock()
			hs := h.sessions[a.session]
			h.mu.Unlock()
			hs.sess.mu.Lock()
			_, ok := hs.sess.inflight[`"`+id+`"`]
			hs.sess.mu.Unlock()
			if ok {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("request %s did not start", id)
	}
	b := &httpClient{t: t, url: url}
	b.initialize(VersionLegacy)
	sleep := func(c *httpClient, id string) chan map[string]any {
		done := make(chan map[string]any, 1)
		go func() {
			_, _, msg := c.post(`{"jsonrpc":"2.0","id":"`+id+`","method":"tools/call","params":{"name":"run_skill_script","arguments":{"skill":"probe","script":"sleep.sh","args":["1"]}}}`, nil)
			done <- msg
		}()
		return done
	}
	cancel := func(c *httpClient, id string) {
		if status, _, _ := c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"`+id+`"}}`, nil); status != http.StatusAccepted {
			t.Errorf("notifications/cancelled: %d", status)
		}
	}
	done := sleep(a, "long")
	started("long")
	cancel(b, "long") // b's session has no such request
	if msg := <-done; dig(msg, "result", "structuredContent", "exit_code") != float64(0) {
		t.Errorf("a's run, after b cancelled its id: %v", msg)
	}
	done = sleep(a, "mine")
	started("mine")
	cancel(a, "mine")
	select {
	case msg := <-done:
		// Cancelled: no response on the stream (the spec asks for none).
		if msg != nil {
			t.Errorf("a's own cancelled run answered: %v", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a's own cancel did not end its request")
	}
}

// TestHTTPSharedPool checks that runs take HTTPOptions.Pool's init
// processes and that Close leaves that pool to its owner.
func TestHTTPSharedPool(t *testing.T) {
	dir := skillsDir(t)
	pool, err := run.NewPool(1, 0, run.Sandbox{SkillDir: filepath.Join(dir, "probe")})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	h, url := newHTTPServer(t, Config{SkillDirs: []string{dir}, Prestart: 3}, HTTPOptions{Pool: pool})
	if h.pool != pool || h.ownPool {
		t.Fatal("the handler did not take the pool given")
	}
	c := &httpClient{t: t, url: url}
	c.initialize(VersionLegacy)
	for range 2 {
		_, _, msg := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_skill_script","arguments":{"skill":"probe","script":"echo.sh"}}}`, nil)
		if dig(msg, "result", "isError") != false {
			t.Fatalf("run: %v", msg)
		}
	}
	h.Close()
	st := pool.Stats()
	if st.Taken+st.Missed != 2 {
		t.Errorf("pool stats %+v: want the 2 runs through it", st)
	}
	if st.Taken == 0 {
		t.Logf("no run took a pre-started init process (%+v): no user namespaces here?", st)
	}
}

// TestHTTPRefusedRecorded checks that what the transport refuses before
// dispatch gets a refused-request record, as a stdio server's refusals
// do: a foreign origin, an oversized body, a forged session, a mismatched
// header; and that a served request gets none.
func TestHTTPRefusedRecorded(t *testing.T) {
	log := &syncBuffer{}
	h, url := newHTTPServer(t, Config{MaxMessageBytes: 4096, Log: log, Version: "test"}, HTTPOptions{})
	h.s.refusals = newRefusalLog(1<<20, h.s.writeRefusal) // counted one by one
	c := &httpClient{t: t, url: url}
	c.initialize(VersionLegacy)
	meta, _ := json.Marshal(statelessMeta())
	for _, tc := range []struct {
		name   string
		body   string
		hdr    http.Header
		status int
		code   int
		method string
	}{
		{"foreign origin", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.Header{"Origin": {"http://evil.example"}}, 403, CodeInvalidRequest, ""},
		{"oversized", `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"` + strings.Repeat("x", 5000) + `"}}`, nil, 413, CodeInvalidRequest, ""},
		{"forged session", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, http.Header{headerSessionID: {strings.Repeat("f", 32)}}, 404, CodeInvalidRequest, "ping"},
		{"header mismatch", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":` + string(meta) + `}}`, http.Header{headerProtocolVersion: {VersionStateless}, headerMethod: {"tools/call"}}, 400, CodeHeaderMismatch, "tools/list"},
		{"served", `{"jsonrpc":"2.0","id":5,"method":"ping"}`, nil, 200, 0, ""},
	} {
		before := len(refusedRecords(t, log.String()))
		if status, _, msg := c.post(tc.body, tc.hdr); status != tc.status {
			t.Fatalf("%s: status %d, want %d: %v", tc.name, status, tc.status, msg)
		}
		recs := refusedRecords(t, log.String())
		if tc.code == 0 {
			if len(recs) != before {
				t.Errorf("%s: %d records, want none", tc.name, len(recs)-before)
			}
			continue
		}
		if len(recs) != before+1 {
			t.Fatalf("%s: %d records, want 1", tc.name, len(recs)-before)
		}
		if r := recs[len(recs)-1]; r.Protocol.Code != tc.code || r.Protocol.Method != tc.method {
			t.Errorf("%s: record %+v", tc.name, r.Protocol)
		}
	}
	// The GET stream every session's client tries: 405, no record.
	before := len(refusedRecords(t, log.String()))
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := len(refusedRecords(t, log.String())); resp.StatusCode != http.StatusMethodNotAllowed || n != before {
		t.Errorf("GET: %d, %d records", resp.StatusCode, n-before)
	}
}
