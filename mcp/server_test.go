package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
)

func TestMain(m *testing.M) {
	// The sandbox re-executes this test binary as its init process.
	run.ExecInitIfRequested()
	os.Exit(runWithCache(m))
}

// runWithCache runs the tests with a cache folder of their own: the
// verified copies they make stay out of the user's.
func runWithCache(m *testing.M) int {
	dir, err := os.MkdirTemp("", "skill-sandbox-mcp-cache-")
	if err != nil {
		return m.Run()
	}
	defer os.RemoveAll(dir)
	os.Setenv("XDG_CACHE_HOME", dir)
	return m.Run()
}

// skillsDir writes a folder of test skills and returns it: "probe" (valid,
// with scripts and references), "broken" (invalid: no name) and
// "linked" (invalid: a symlink out of the skill). It is world-readable, since a root caller's
// sandbox runs as nobody.
func skillsDir(t testing.TB) string {
	t.Helper()
	base, err := os.MkdirTemp("", "skill-sandbox-mcp-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	files := map[string]string{
		"probe/SKILL.md":              "---\nname: probe\ndescription: A probe skill used by the mcp tests to exercise the server.\n---\n# Probe\n\nRuns test scripts.\n",
		"probe/scripts/echo.sh":       "#!/bin/sh\necho \"args:$*\"\ncat\n",
		"probe/scripts/fail.sh":       "#!/bin/sh\necho oops >&2\nexit 3\n",
		"probe/scripts/sleep.sh":      "#!/bin/sh\necho started\nexec sleep \"$1\"\n",
		"probe/scripts/write.sh":      "#!/bin/sh\necho data > \"$1\"\n",
		"probe/references/guide.md":   "# Guide\n\nRead me.\n",
		"probe/references/big.txt":    strings.Repeat("x", 3000),
		"probe/references/binary.bin": "\xff\xfe\x00\x01",
		"broken/SKILL.md":             "---\ndescription: A skill without a name, which run refuses.\n---\nNo name.\n",
	}
	for name, body := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A skill with symlinks out of it is invalid: it is never served.
	if err := os.MkdirAll(filepath.Join(base, "linked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "linked/SKILL.md"), []byte("---\nname: linked\ndescription: A skill whose files are symlinks out of it, which validation refuses.\n---\nBody.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(base, "linked/passwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return base
}

// client drives a Server over pipes, as an MCP client would over stdio.
type client struct {
	t      testing.TB
	srv    *Server
	in     *io.PipeWriter
	out    *bufio.Scanner
	done   chan error
	log    *syncBuffer
	mu     sync.Mutex
	queued map[string]map[string]any // responses read while waiting for another id
	nextID int
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newClient(t testing.TB, cfg Config) *client {
	t.Helper()
	log := &syncBuffer{}
	if cfg.Log == nil {
		cfg.Log = log
	}
	if cfg.Version == "" {
		cfg.Version = "test"
	}
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, srv: srv, in: inW, done: make(chan error, 1), log: log, queued: map[string]map[string]any{}}
	c.out = bufio.NewScanner(outR)
	c.out.Buffer(make([]byte, 0, 64<<10), 16<<20)
	go func() {
		err := srv.Serve(context.Background(), inR, outW)
		outW.Close()
		c.done <- err
	}()
	t.Cleanup(func() { c.close() })
	return c
}

// close sends EOF and waits for Serve to return.
func (c *client) close() error {
	c.in.Close()
	select {
	case err := <-c.done:
		c.done <- err
		return err
	case <-time.After(30 * time.Second):
		c.t.Error("Serve did not return after EOF")
		return nil
	}
}

// sendLine writes raw bytes as one message.
func (c *client) sendLine(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read returns the next response (any id).
func (c *client) read() map[string]any {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("no response: %v", c.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("response is not JSON: %v: %s", err, c.out.Bytes())
	}
	return m
}

// waitFor returns the response with the given id (JSON text), keeping
// others for later calls.
func (c *client) waitFor(id string) map[string]any {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if m, ok := c.queued[id]; ok {
			delete(c.queued, id)
			return m
		}
		m := c.read()
		raw, _ := json.Marshal(m["id"])
		if string(raw) == id {
			return m
		}
		c.queued[string(raw)] = m
	}
}

// request sends a request with a fresh numeric id and returns its response.
func (c *client) request(method string, params any) map[string]any {
	c.t.Helper()
	id := c.send(method, params)
	return c.waitFor(id)
}

// send sends a request and returns its id as JSON text.
func (c *client) send(method string, params any) string {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	c.sendLine(string(b))
	return fmt.Sprint(id)
}

func (c *client) initialize() {
	c.t.Helper()
	r := c.request("initialize", map[string]any{
		"protocolVersion": VersionLegacy, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "go-test", "version": "1"},
	})
	if got := dig(r, "result", "protocolVersion"); got != VersionLegacy {
		c.t.Fatalf("initialize: protocolVersion %v, want %s: %v", got, VersionLegacy, r)
	}
	c.sendLine(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// call runs tools/call in the handshake era and returns the result.
func (c *client) call(name string, args any) map[string]any {
	c.t.Helper()
	r := c.request("tools/call", map[string]any{"name": name, "arguments": args})
	res, ok := r["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("tools/call %s: no result: %v", name, r)
	}
	return res
}

// statelessMeta is the _meta of a 2026-07-28 request.
func statelessMeta() map[string]any {
	return map[string]any{
		metaProtocolVersion:    VersionStateless,
		metaClientCapabilities: map[string]any{},
		metaClientInfo:         map[string]any{"name": "go-test-stateless", "version": "2"},
	}
}

// dig walks nested maps (and list indexes given as ints).
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// records returns the audit records written to the log.
func records(t testing.TB, log string) []audit.Record {
	t.Helper()
	var recs []audit.Record
	for _, line := range strings.Split(log, "\n") {
		if !strings.HasPrefix(line, `{"schema_version"`) {
			continue
		}
		if err := audit.CheckLine([]byte(line)); err != nil {
			t.Errorf("record does not match the schema: %v\n%s", err, line)
		}
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestOneLineControls: log lines quote skill folder names and validation
// problems, which a skill's author chooses; no control character of them
// may reach the operator's terminal.
func TestOneLineControls(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain name", "plain name"},
		{"a\x1b]0;title\x07b", "a ]0;title b"},
		{"two\nlines\r", "two lines "},
		{"c1 \u009b2J del \x7f", "c1  2J del  "},
		{"é 中", "é 中"},
	}
	for _, c := range cases {
		if got := oneLine(c.in, 100); got != c.want {
			t.Errorf("oneLine(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
