package serve

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// Tokens of the fixture's tenants.
const (
	tokenA = "secret-token-of-team-a"
	tokenB = "secret-token-of-team-b"
)

// echoScript reads its JSON input on stdin and input.txt, writes
// output.json and out/report.txt, and prints its first argument.
const echoScript = `#!/bin/bash
set -e
in=$(cat)
words=$(wc -w < input.txt)
printf '{"stdin":%s,"words":%d}\n' "${in:-null}" "$words" > output.json
mkdir -p out
echo "report $1" > out/report.txt
echo "done $1"
`

// fixture is a server with two tenants, team-a (skill alpha) and team-b
// (skill beta), each with its own folder, served by httptest.
type fixture struct {
	srv      *Server
	ts       *httptest.Server
	auditLog string
	logs     *bytes.Buffer
}

// writeSkill makes a skill folder dir/name with the given scripts.
func writeSkill(t testing.TB, dir, name string, scripts map[string]string) string {
	t.Helper()
	sk := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Join(sk, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: " + name + "\ndescription: Test skill " + name + " for the serve tests.\n---\n\nRun a script.\n"
	if err := os.WriteFile(filepath.Join(sk, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	for n, body := range scripts {
		if err := os.WriteFile(filepath.Join(sk, "scripts", n), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return sk
}

func newFixture(t testing.TB, edit func(*Config)) *fixture {
	t.Helper()
	base := t.TempDir()
	for _, d := range []string{"a", "b", "work"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeSkill(t, filepath.Join(base, "a"), "alpha", map[string]string{"echo.sh": echoScript})
	writeSkill(t, filepath.Join(base, "b"), "beta", map[string]string{"echo.sh": echoScript, "other.sh": "#!/bin/bash\necho other\n"})
	tokens := []Token{
		{ID: "a-1", Tenant: "team-a", Skills: []string{filepath.Join(base, "a")}},
		{ID: "b-1", Tenant: "team-b", Skills: []string{filepath.Join(base, "b")}},
	}
	tokens[0].SHA256 = sha(tokenA)
	tokens[1].SHA256 = sha(tokenB)
	f := &fixture{auditLog: filepath.Join(base, "audit.jsonl"), logs: &bytes.Buffer{}}
	log, err := audit.OpenLog(f.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	cfg := Config{Tokens: tokens, WorkDir: filepath.Join(base, "work"), AuditLog: log, Version: "test",
		Log: slog.New(slog.NewJSONHandler(&lockedBuffer{b: f.logs}, nil))}
	if edit != nil {
		edit(&cfg)
	}
	f.srv, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.ts = httptest.NewServer(f.srv.Handler())
	t.Cleanup(func() {
		f.ts.Close()
		f.srv.Close()
	})
	return f
}

func sha(tok string) (h [32]byte) {
	b, _ := hex.DecodeString(HashToken(tok))
	copy(h[:], b)
	return h
}

// do sends a request with token tok ("" for none) and returns the
// status, the headers and the body.
func (f *fixture) do(t testing.TB, method, path, tok string, body any) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := f.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// records returns the audit records written so far.
func (f *fixture) records(t testing.TB) []audit.Record {
	t.Helper()
	data, err := os.ReadFile(f.auditLog)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var recs []audit.Record
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("record %s: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// needSandbox skips the test where the sandbox cannot run a script here.
func needSandbox(t testing.TB) {
	t.Helper()
	dir := t.TempDir()
	sb := run.Sandbox{SkillDir: dir}
	res, err := sb.Command(context.Background(), []string{"true"})
	res.WaitCleanup()
	if errors.Is(err, run.ErrIsolation) || errors.Is(err, run.ErrUnsupported) || errors.Is(err, run.ErrStart) {
		t.Skipf("the sandbox cannot run here: %v", err)
	}
	if err != nil {
		t.Fatalf("a run of true failed: %v", err)
	}
}

// lockedBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// timeAfter waits ms milliseconds.
func timeAfter(ms int) <-chan time.Time { return time.After(time.Duration(ms) * time.Millisecond) }
