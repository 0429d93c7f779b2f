//go:build unix

package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/serve"
)

// serveToken is the token of the served test tenant.
const serveToken = "serve-cli-test-token-0123456789"

// serveProc is a running skill-sandbox serve.
type serveProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	exited chan struct{}
	code   int
}

// syncBuffer is a bytes.Buffer written by the process's stderr copy and
// read by the test.
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

// writeTokens writes a tokens file giving serveToken tenant "t1" the
// skills folder dir.
func writeTokens(t *testing.T, dir string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "tokens.json")
	body := fmt.Sprintf(`{"tokens":[{"id":"cli","sha256":%q,"tenant":"t1","skills":[%q]}]}`, serve.HashToken(serveToken), dir)
	if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// startServe starts skill-sandbox serve with args (and --listen on a
// free port) and waits until it serves.
func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	p := &serveProc{stderr: &syncBuffer{}, exited: make(chan struct{})}
	// The work folder is the test's: a server killed by a failing test
	// leaves nothing behind.
	p.cmd = exec.Command(cliBinary, append([]string{"serve", "--listen", "127.0.0.1:0", "--log-level", "debug",
		"--work-dir", t.TempDir()}, args...)...)
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	t.Cleanup(func() {
		// A drain first, then SIGKILL if it takes too long.
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	addr := regexp.MustCompile(`"msg":"serving","address":"(https?://[^"]+)"`)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := addr.FindStringSubmatch(p.stderr.String()); m != nil {
			p.url = m[1]
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("serve exited %d:\n%s", p.code, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not start:\n%s", p.stderr.String())
	return nil
}

// post starts an execution and returns the status and the execution id.
func (p *serveProc) post(body string) (int, string) {
	req, _ := http.NewRequest("POST", p.url+"/v1/executions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+serveToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	var v struct {
		ID string `json:"execution_id"`
	}
	json.NewDecoder(resp.Body).Decode(&v)
	return resp.StatusCode, v.ID
}

// wait waits for the process to exit and returns its status.
func (p *serveProc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(limit):
		t.Fatalf("serve still runs after %v:\n%s", limit, p.stderr.String())
	}
	return -1
}

// auditRecords reads the serve records of an audit log.
// auditRecords returns the outcome of each execution's record, and the
// requests refused for the server's state (busy, draining) that the
// records account for (1 + serve.suppressed each).
func auditRecords(t *testing.T, name string) (map[string]string, int64) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{} // execution id -> outcome
	var refused int64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		rec := parseRecord(t, sc.Bytes())
		if rec.Serve == nil || rec.Serve.Tenant != "t1" || rec.Serve.TokenID != "cli" {
			t.Errorf("record without its serve object: %s", sc.Text())
			continue
		}
		if rec.ErrorKind == audit.KindBusy || rec.ErrorKind == audit.KindDraining {
			refused += 1 + rec.Serve.Suppressed
			continue
		}
		if _, dup := out[rec.Serve.ExecutionID]; dup {
			t.Errorf("two records of execution %s", rec.Serve.ExecutionID)
		}
		out[rec.Serve.ExecutionID] = rec.Outcome
	}
	return out, refused
}

// TestServeDrainLosesNoRecord sends SIGTERM to a real skill-sandbox serve
// while runs are in progress and queued, and keeps sending requests: the
// server exits 0 once every accepted execution has finished, and the
// audit log holds exactly one record of each, all exited.
func TestServeDrainLosesNoRecord(t *testing.T) {
	skill := newSkill(t, map[string]string{"scripts/nap.sh": "sleep 0.3\necho done\n"})
	requireSandbox(t, skill)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	p := startServe(t, "--tokens", writeTokens(t, skill), "--audit-log", log, "--max-runs", "2", "--queue", "8", "--drain-timeout", "60s")
	var mu sync.Mutex
	accepted := map[string]bool{}
	var refusals int64 // 429 and 503 answers
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				status, id := p.post(`{"skill":"e2e-skill","script":"scripts/nap.sh"}`)
				switch status {
				case http.StatusAccepted:
					mu.Lock()
					accepted[id] = true
					mu.Unlock()
				case http.StatusServiceUnavailable, http.StatusTooManyRequests:
					mu.Lock()
					refusals++
					mu.Unlock()
					time.Sleep(10 * time.Millisecond)
				case 0:
					// No longer listening: the queue was kept full while
					// the signal came.
					time.Sleep(10 * time.Millisecond)
				default:
					t.Errorf("POST: status %d", status)
				}
			}
		}()
	}
	time.Sleep(700 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := p.wait(t, 90*time.Second)
	close(stop)
	wg.Wait()
	if code != 0 {
		t.Errorf("exit status %d after the drain:\n%s", code, p.stderr.String())
	}
	recs, refused := auditRecords(t, log)
	if len(accepted) < 3 {
		t.Fatalf("only %d executions accepted before SIGTERM", len(accepted))
	}
	for id := range accepted {
		if out, ok := recs[id]; !ok || out != "exited" {
			t.Errorf("accepted execution %s: record %q", id, out)
		}
	}
	if len(recs) != len(accepted) {
		t.Errorf("%d records for %d accepted executions", len(recs), len(accepted))
	}
	// Every 429 and 503 is accounted for by the capped refusal records.
	if refused != refusals {
		t.Errorf("the refusal records account for %d refused requests, the clients got %d", refused, refusals)
	}
	t.Logf("%d executions accepted, %d records; %d refused", len(accepted), len(recs), refusals)
}

// TestServeDrainTimeout: runs still going at --drain-timeout are stopped,
// queued ones too, each with its record (canceled), and the exit status
// says runs were stopped.
func TestServeDrainTimeout(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	p := startServe(t, "--tokens", writeTokens(t, skill), "--audit-log", log, "--max-runs", "1", "--drain-timeout", "1s")
	var ids []string
	for range 3 {
		status, id := p.post(`{"skill":"e2e-skill","script":"scripts/sleep.sh"}`)
		if status != http.StatusAccepted {
			t.Fatalf("POST: %d", status)
		}
		ids = append(ids, id)
	}
	time.Sleep(300 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t, 30*time.Second); code != 1 {
		t.Errorf("exit status %d, want 1:\n%s", code, p.stderr.String())
	}
	recs, _ := auditRecords(t, log)
	for _, id := range ids {
		if recs[id] != "canceled" {
			t.Errorf("execution %s: outcome %q, want canceled", id, recs[id])
		}
	}
	if len(recs) != 3 {
		t.Errorf("%d records, want 3", len(recs))
	}
}

// TestServeUsage: the hash-token subcommand and the command line's
// mistakes.
func TestServeUsage(t *testing.T) {
	cmd := exec.Command(cliBinary, "serve", "hash-token")
	cmd.Stdin = strings.NewReader(serveToken + "\n")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != serve.HashToken(serveToken) {
		t.Errorf("hash-token: %q %v", out, err)
	}
	cmd = exec.Command(cliBinary, "serve", "hash-token")
	cmd.Stdin = strings.NewReader("short\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 2 || !strings.Contains(stderr.String(), "at least 16") {
		t.Errorf("short token: %v %s", err, stderr.String())
	}
	bad := filepath.Join(t.TempDir(), "tokens.json")
	os.WriteFile(bad, []byte(`{"tokens":[{"id":"x","sha256":"nothex","tenant":"t","skills":["/s"]}]}`), 0o600)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve"}, 2, "want --tokens FILE"},
		{[]string{"serve", "--tokens", bad, "--tls-cert", "c.pem"}, 2, "--tls-cert and --tls-key go together"},
		{[]string{"serve", "--tokens", bad}, 1, "skill-sandbox: error: serve: tokens file " + bad + ": token 1 (\"x\"): \"sha256\" must be 64 lowercase hex digits"},
		{[]string{"serve", "--tokens", bad, "--max-runs", "0"}, 2, "--max-runs must be positive"},
		{[]string{"serve", "--tokens", bad, "--max-conns", "0"}, 2, "--max-conns must be positive"},
		{[]string{"serve", "--tokens", bad, "--max-runs", "2", "--prestart", "3"}, 2, "--prestart must be between 0 and --max-runs (2), got 3"},
		{[]string{"serve", "--tokens", bad, "--prestart", "-1"}, 2, "--prestart must be between 0 and --max-runs (4), got -1"},
		{[]string{"serve", "--tokens", bad, "--keep-memory", "-1"}, 2, "--keep-memory"},
		{[]string{"serve", "--tokens", bad, "--keep-disk", "0"}, 2, "--keep-disk"},
	} {
		r := runCLI(t, "", c.args...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, r.Code, r.Stderr, c.code, c.want)
		}
	}
}

// TestServeDocsCurl runs the curl commands of docs/serve.md's Examples,
// in order, as one bash script, against the server its first block
// starts (on a free port), in a folder holding testdata/serve.
func TestServeDocsCurl(t *testing.T) {
	for _, tool := range []string{"curl", "jq", "openssl"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (CI installs it)", tool)
			}
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	requireSandbox(t, newSkill(t, nil))
	text, err := os.ReadFile(repoPath("docs", "serve.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, examples, ok := strings.Cut(string(text), "\n## Examples\n")
	if !ok {
		t.Fatal("docs/serve.md has no Examples section")
	}
	examples, _, _ = strings.Cut(examples, "\n## ")
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(examples, -1)
	if len(blocks) < 4 {
		t.Fatalf("%d sh blocks in the Examples, want at least 4", len(blocks))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	script := "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null; wait' EXIT\n"
	for _, b := range blocks {
		script += strings.ReplaceAll(b[1], "127.0.0.1:8080", fmt.Sprintf("127.0.0.1:%d", port))
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "testdata", "serve"), os.DirFS(repoPath("testdata", "serve"))); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			mode := os.FileMode(0o644)
			if d.IsDir() || strings.HasSuffix(p, ".py") {
				mode = 0o755
			}
			os.Chmod(p, mode)
		}
		return err
	})
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(cliBinary)+":"+os.Getenv("PATH"))
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		err = <-done
	}
	if err != nil {
		t.Fatalf("the docs' commands failed: %v\n%s", err, out.String())
	}
	for _, want := range []string{`"name":"csv-stats"`, "amount: 2 rows, sum 42, mean 21", `"status": "success"`, "problem-not-found", "401"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestServeMetricsToken: with --metrics-token-file, /metrics answers
// only the holder of that token, and a file that holds no hash stops the
// server from starting.
func TestServeMetricsToken(t *testing.T) {
	skill := newSkill(t, nil)
	const tok = "metrics-token-of-the-cli-test"
	file := filepath.Join(t.TempDir(), "metrics-token")
	if err := os.WriteFile(file, []byte(serve.HashToken(tok)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, "--tokens", writeTokens(t, skill), "--metrics-token-file", file)
	for _, c := range []struct {
		tok  string
		want int
	}{{"", 401}, {serveToken, 401}, {tok, 200}} {
		req, _ := http.NewRequest("GET", p.url+"/metrics", nil)
		if c.tok != "" {
			req.Header.Set("Authorization", "Bearer "+c.tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("/metrics with token %q: %d, want %d", c.tok, resp.StatusCode, c.want)
		}
	}
	if err := os.WriteFile(file, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "", "serve", "--tokens", writeTokens(t, skill), "--metrics-token-file", file, "--listen", "127.0.0.1:0")
	if r.Code != 1 || !strings.Contains(r.Stderr, "metrics token file "+file) {
		t.Errorf("a metrics token file holding the token itself: exit %d, %s", r.Code, r.Stderr)
	}
}

// TestServeTLS: with --tls-cert and --tls-key the server speaks TLS
// from those files, HTTP/2 by ALPN, and the API works over it.
func TestServeTLS(t *testing.T) {
	skill := newSkill(t, nil)
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	p := startServe(t, "--tokens", writeTokens(t, skill), "--tls-cert", certFile, "--tls-key", keyFile)
	url := strings.Replace(p.url, "http://", "https://", 1)
	if !strings.HasPrefix(p.url, "https://") {
		t.Errorf("the log names %s, not https", p.url)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	req, _ := http.NewRequest("GET", url+"/v1/skills", nil)
	req.Header.Set("Authorization", "Bearer "+serveToken)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
		t.Errorf("GET /v1/skills over TLS: %d %s", resp.StatusCode, resp.Proto)
	}
}
