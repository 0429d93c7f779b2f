package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/serve/client"
)

// secret is what the attacks below try to read through the artifact
// route.
const secret = "top-secret-host-file"

// runEcho runs alpha's echo.sh for team-a and returns the finished
// execution.
func runEcho(t *testing.T, f *fixture) client.Execution {
	t.Helper()
	req := map[string]any{"skill": "alpha", "script": "scripts/echo.sh", "args": []string{"x"},
		"files": []map[string]string{{"path": "input.txt", "content_base64": b64("a b")}}}
	status, _, body := f.do(t, "POST", "/v1/executions?wait=true", tokenA, req)
	if status != 200 {
		t.Fatalf("POST: %d %s", status, body)
	}
	var v client.Execution
	if err := json.Unmarshal(body, &v); err != nil || v.Status != StatusSuccess {
		t.Fatalf("execution %s: %v", body, err)
	}
	return v
}

// TestArtifactTraversal: paths with "..", encoded or not, absolute paths
// and files the run did not make are never served.
func TestArtifactTraversal(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, nil)
	v := runEcho(t, f)
	outside := filepath.Join(filepath.Dir(f.srv.cfg.WorkDir), "secret.txt")
	if err := os.WriteFile(outside, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	base := "/v1/executions/" + v.ID + "/artifacts/"
	for _, p := range []string{"../secret.txt", "%2e%2e/secret.txt", "..%2fsecret.txt", "out/..%2f..%2fsecret.txt",
		"%2fetc%2fpasswd", "input.txt", "out", "out/", "nothing"} {
		status, body := rawGet(t, f, base+p, tokenA)
		if status == 200 || strings.Contains(body, secret) || strings.Contains(body, "root:") {
			t.Errorf("GET %s: %d %q", base+p, status, body)
		}
	}
}

// rawGet sends a GET whose path is written as is (no client-side
// cleaning) and returns the status and body.
func rawGet(t *testing.T, f *fixture, path, tok string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", path, tok)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestArtifactLinkSwap: an artifact replaced by a symbolic link after the
// run (to a file, or a folder on its path replaced by a link to another
// folder) is refused, not followed: the listing check alone would pass
// these, openat2's resolution refuses them.
func TestArtifactLinkSwap(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, nil)
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{filepath.Join(other, "secret.txt"), filepath.Join(other, "out", "report.txt")} {
		if err := os.WriteFile(name, []byte(secret), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		swap func(dir string) error
	}{
		{"file replaced by a link", func(dir string) error {
			p := filepath.Join(dir, "out", "report.txt")
			os.Remove(p)
			return os.Symlink(filepath.Join(other, "secret.txt"), p)
		}},
		{"folder replaced by a link", func(dir string) error {
			os.RemoveAll(filepath.Join(dir, "out"))
			return os.Symlink(filepath.Join(other, "out"), filepath.Join(dir, "out"))
		}},
		{"relative link out", func(dir string) error {
			p := filepath.Join(dir, "out", "report.txt")
			os.Remove(p)
			rel, _ := filepath.Rel(filepath.Join(dir, "out"), filepath.Join(other, "secret.txt"))
			return os.Symlink(rel, p)
		}},
		{"fifo", func(dir string) error {
			p := filepath.Join(dir, "out", "report.txt")
			os.Remove(p)
			return exec.Command("mkfifo", p).Run()
		}},
	} {
		v := runEcho(t, f)
		e := f.srv.tenants["team-a"].get(v.ID)
		if err := c.swap(e.dir); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		done := make(chan struct{})
		var status int
		var body string
		go func() {
			defer close(done)
			status, body = rawGet(t, f, "/v1/executions/"+v.ID+"/artifacts/out/report.txt", tokenA)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the download hangs", c.name)
		}
		if status != http.StatusForbidden || strings.Contains(body, secret) {
			t.Errorf("%s: %d %q, want 403 without the secret", c.name, status, body)
		}
	}
}

// TestLinkLeftByScript: a link the script itself leaves in its folder is
// listed (or neutralised by the run's sweep) but never downloadable.
func TestLinkLeftByScript(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, func(c *Config) {})
	dir := filepath.Join(f.srv.tenants["team-a"].skillDirs[0], "alpha", "scripts")
	script := "#!/bin/bash\nln -s /etc/passwd pw\nln -s / root\necho hi > ok.txt\n"
	if err := os.WriteFile(filepath.Join(dir, "links.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	status, _, body := f.do(t, "POST", "/v1/executions?wait=true", tokenA, map[string]any{"skill": "alpha", "script": "scripts/links.sh"})
	var v client.Execution
	if status != 200 || json.Unmarshal(body, &v) != nil {
		t.Fatalf("POST: %d %s", status, body)
	}
	for _, p := range []string{"pw", "root/etc/passwd", "root"} {
		status, got := rawGet(t, f, "/v1/executions/"+v.ID+"/artifacts/"+p, tokenA)
		if status == 200 || strings.Contains(got, "root:") {
			t.Errorf("GET artifact %s: %d %q", p, status, got)
		}
	}
	if status, got := rawGet(t, f, "/v1/executions/"+v.ID+"/artifacts/ok.txt", tokenA); status != 200 || got != "hi\n" {
		t.Errorf("GET ok.txt: %d %q", status, got)
	}
}

// TestOversizedBody: a body past MaxBodyBytes is refused with 413 while
// it arrives, and recorded.
func TestOversizedBody(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxBodyBytes = 4096 })
	big := map[string]any{"skill": "alpha", "stdin": strings.Repeat("x", 1<<20)}
	status, h, body := f.do(t, "POST", "/v1/executions", tokenA, big)
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d %s", status, body)
	}
	checkProblem(t, h, body, http.StatusRequestEntityTooLarge, ProblemBadRequest)
	if recs := f.records(t); len(recs) != 1 || recs[0].ErrorKind != "usage" || recs[0].Serve == nil {
		t.Errorf("records %+v", recs)
	}
}

// TestSlowloris: a client that never finishes its headers loses the
// connection after ReadHeaderTimeout.
func TestSlowloris(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.ReadHeaderTimeout = 300 * time.Millisecond })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := f.srv.HTTPServer()
	go hs.Serve(ln)
	defer hs.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	n, err := conn.Read(make([]byte, 1024))
	if err == nil && n > 0 {
		// A 408 may come first; the connection must close after it.
		_, err = io.ReadAll(conn)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection is still open after %v", time.Since(start))
	}
}

// TestQueueFull: past the run slots and the queue, a run is refused with
// 429 and Retry-After; the accepted ones all finish.
func TestQueueFull(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, func(c *Config) { c.MaxRuns, c.Queue = 1, 1 })
	dir := filepath.Join(f.srv.tenants["team-a"].skillDirs[0], "alpha", "scripts")
	if err := os.WriteFile(filepath.Join(dir, "slow.sh"), []byte("#!/bin/bash\nsleep 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var locs []string
	for i := range 3 {
		status, h, body := f.do(t, "POST", "/v1/executions", tokenA, map[string]any{"skill": "alpha", "script": "scripts/slow.sh"})
		if i < 2 {
			if status != http.StatusAccepted {
				t.Fatalf("run %d: %d %s", i, status, body)
			}
			locs = append(locs, h.Get("Location"))
			continue
		}
		if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
			t.Fatalf("run %d: %d (Retry-After %q) %s", i, status, h.Get("Retry-After"), body)
		}
		checkProblem(t, h, body, http.StatusTooManyRequests, ProblemQueueFull)
	}
	for _, l := range locs {
		if v := waitExecution(t, f, l, tokenA); v.Status != StatusSuccess {
			t.Errorf("%s: %s", l, v.Status)
		}
	}
	_, _, m := f.do(t, "GET", "/metrics", "", nil)
	if !bytes.Contains(m, []byte("skill_sandbox_queue_rejections_total 1\n")) {
		t.Errorf("metrics:\n%s", m)
	}
	// The 429 has its record, as every other call.
	var busy int
	for _, r := range f.records(t) {
		if r.ErrorKind == audit.KindBusy && r.Outcome == audit.OutcomeRefused && r.Serve != nil && r.Serve.Tenant == "team-a" {
			busy++
		}
	}
	if busy != 1 {
		t.Errorf("%d busy records, want 1", busy)
	}
}

// TestWaitingClientsQueue: clients waiting for their runs (?wait=true) do
// not hold the upload slots, so more of them than slots are all accepted
// and queued.
func TestWaitingClientsQueue(t *testing.T) {
	needSandbox(t)
	f := newFixture(t, func(c *Config) { c.MaxRuns, c.Queue = 1, 8 })
	dir := filepath.Join(f.srv.tenants["team-a"].skillDirs[0], "alpha", "scripts")
	if err := os.WriteFile(filepath.Join(dir, "slow.sh"), []byte("#!/bin/bash\nsleep 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	n := cap(f.srv.uploads) + 2
	done := make(chan int, n)
	for range n {
		go func() {
			status, _, _ := f.do(t, "POST", "/v1/executions?wait=true", tokenA, map[string]any{"skill": "alpha", "script": "scripts/slow.sh"})
			done <- status
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.srv.queue.running()+f.srv.queue.waiting() < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := f.srv.queue.running() + f.srv.queue.waiting(); got != n {
		t.Errorf("%d of %d waiting clients' runs accepted", got, n)
	}
	for range n {
		if status := <-done; status != http.StatusOK {
			t.Errorf("status %d", status)
		}
	}
}
