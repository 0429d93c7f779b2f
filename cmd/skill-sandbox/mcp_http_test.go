package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startMCPHTTP starts skill-sandbox mcp --http on a free loopback port
// with args, and returns the URL of its MCP endpoint and its audit log.
// The server is interrupted and waited for when the test ends.
func startMCPHTTP(t *testing.T, args ...string) (url, auditLog string) {
	t.Helper()
	skills, err := filepath.Abs(repoPath("testdata", "example"))
	if err != nil {
		t.Fatal(err)
	}
	auditLog = filepath.Join(t.TempDir(), "audit.jsonl")
	all := append([]string{"mcp", "--skills", skills, "--audit-log", auditLog, "--http", "127.0.0.1:0"}, args...)
	cmd := exec.Command(cliBinary, all...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	found := make(chan string, 1)
	var log bytes.Buffer
	go func() {
		for lines.Scan() {
			if _, u, ok := strings.Cut(lines.Text(), "Streamable HTTP at "); ok {
				found <- u
			}
			log.WriteString(lines.Text() + "\n")
		}
		close(found)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	select {
	case u, ok := <-found:
		if !ok {
			cmd.Wait()
			t.Fatalf("the server did not start")
		}
		return u, auditLog
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not say where it listens within 30s")
	}
	return "", ""
}

// TestMCPHTTPNodeClient drives mcp --http with the real client of each
// era over Streamable HTTP (scripts/mcpclient/http.mjs): it lists and runs
// tools, and reads every skill file through the Skills extension, each
// checked against its digest by the client (and, in 2026-07-28, by the
// SDK's own SkillsClient); the digests are also those of skill-sandbox
// digest --manifest.
func TestMCPHTTPNodeClient(t *testing.T) {
	node, clientDir := nodeClient(t)
	manifest := exampleManifest(t)
	url, auditLog := startMCPHTTP(t, "--prestart", "1")
	for _, tc := range []struct {
		era, sdk string
		session  bool
	}{
		{"2025-03-26", "sdk-2025-03-26@1.12.3", true},
		{"2025-06-18", "sdk-2025-06-18@1.24.0", true},
		{"2025-11-25", "@modelcontextprotocol/sdk@1.32.2", true},
		{"2026-07-28", "sdk-2026-07-28@2.4.0", false},
	} {
		t.Run(tc.era, func(t *testing.T) {
			cmd := exec.Command(node, filepath.Join(clientDir, "http.mjs"), tc.era, url)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("client: %v\nstderr:\n%s", err, stderr.String())
			}
			var out struct {
				SDK        string         `json:"sdk"`
				Session    *string        `json:"session"`
				Terminated *bool          `json:"terminated"`
				Tools      []string       `json:"tools"`
				Call       map[string]any `json:"call"`
				skillsChecked
				HTTP []struct {
					Method, ContentType string
					ProtocolVersion     *string
					Session             *string
					Status              int
				} `json:"http"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("client output: %v\n%s", err, stdout.String())
			}
			if out.SDK != tc.sdk {
				t.Errorf("client SDK %s, want %s", out.SDK, tc.sdk)
			}
			if strings.Join(out.Tools, ",") != "list_skills,read_skill,read_skill_file,run_skill_script,run_command" {
				t.Errorf("tools %v", out.Tools)
			}
			checkRunResult(t, out.Call, tc.era)
			if (out.Session != nil) != tc.session || tc.session && (out.Terminated == nil || !*out.Terminated) {
				t.Errorf("session %v, terminated %v", out.Session, out.Terminated)
			}
			out.check(t, manifest, tc.era)
			// The wire: tools/call as an SSE stream, the version header
			// where the SDK sends it, 405 for the GET stream.
			var sse, get405 bool
			for _, h := range out.HTTP {
				sse = sse || h.ContentType == "text/event-stream"
				get405 = get405 || h.Method == "GET" && h.Status == http.StatusMethodNotAllowed
				if tc.session && h.Session != nil && *h.Session != *out.Session {
					t.Errorf("request in session %s, want %s", *h.Session, *out.Session)
				}
			}
			if !sse || get405 != tc.session {
				t.Errorf("exchanges %+v", out.HTTP)
			}
		})
	}
	// One record per run, as over stdio.
	data, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	if len(lines) != 4 {
		t.Fatalf("%d records, want 4", len(lines))
	}
	for _, l := range lines {
		if rec := parseRecord(t, l); rec.MCP == nil || !strings.HasPrefix(rec.MCP.Client, "skill-sandbox-sdk-http-test-") {
			t.Errorf("record mcp %+v", rec.MCP)
		}
	}
}

// TestMCPHTTPFlags checks the refusals of mcp --http: a public address
// without a token or the explicit flag, a token file others can read, and
// the bearer check of a token file.
func TestMCPHTTPFlags(t *testing.T) {
	skills := repoPath("testdata", "example")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "0.0.0.0:0"}, "is not a loopback address"},
		{[]string{"--http", "localhost"}, "want HOST:PORT"},
		{[]string{"--http-token-file", "x"}, "need --http ADDR"},
	} {
		cmd := exec.Command(cliBinary, append([]string{"mcp", "--skills", skills}, tc.args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: %v, %s", tc.args, err, stderr.String())
		}
	}
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("0123456789abcdef-secret\n"), 0o644)
	cmd := exec.Command(cliBinary, "mcp", "--skills", skills, "--http", "127.0.0.1:0", "--http-token-file", token, "--prestart", "0")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "chmod 600") {
		t.Errorf("a readable token file: %v %s", err, out)
	}
	os.Chmod(token, 0o600)
	url, _ := startMCPHTTP(t, "--http-token-file", token, "--prestart", "0")
	ping := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		auth   string
		status int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong-token-0123456789", http.StatusUnauthorized},
		{"Basic 0123456789abcdef-secret", http.StatusUnauthorized},
		{"bearer 0123456789abcdef-secret", http.StatusOK}, // the scheme is case-insensitive
		{"Bearer 0123456789abcdef-secret", http.StatusOK},
	} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(ping))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("Authorization %q: %d, want %d", tc.auth, resp.StatusCode, tc.status)
		}
	}
}

// TestMCPHTTPInspector drives mcp --http with the MCP Inspector's CLI mode
// (scripts/mcpclient): tools, a tool call, and the Skills extension.
func TestMCPHTTPInspector(t *testing.T) {
	node, clientDir := nodeClient(t)
	inspector := filepath.Join(clientDir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	if _, err := os.Stat(inspector); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the MCP Inspector is not installed (%v); CI must run this test", err)
		}
		t.Skip("the MCP Inspector is not installed: run npm ci --prefix scripts/mcpclient")
	}
	url, auditLog := startMCPHTTP(t, "--prestart", "0")
	home := t.TempDir() // the Inspector keeps a catalog and a store there
	inspect := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(node, append([]string{inspector, "--cli", url}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "MCP_CATALOG_PATH="+filepath.Join(home, "catalog.json"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("inspector %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
		}
		var out map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, stdout.String())
		}
		return out
	}
	tools, _ := inspect("--method", "tools/list")["tools"].([]any)
	if len(tools) != 5 {
		t.Errorf("tools/list: %v", tools)
	}
	call := inspect("--method", "tools/call", "--tool-name", "run_skill_script", "--tool-arg", "skill=word-stats", "script=stats.py", `args=["references/sample.txt"]`)
	checkRunResult(t, call, "2025-11-25")
	skills, _ := inspect("--method", "skills/list")["skills"].([]any)
	if len(skills) != 1 {
		t.Fatalf("skills/list: %v", skills)
	}
	entry, _ := skills[0].(map[string]any)
	got := inspect("--method", "skills/get", "--uri", "skill://word-stats/SKILL.md")
	if b1, b2 := fmt.Sprint(got["skill"]), fmt.Sprint(entry); b1 != b2 {
		t.Errorf("skills/get %s, skills/list %s", b1, b2)
	}
	read := inspect("--method", "resources/read", "--uri", "skill://word-stats/references/sample.txt")
	text, _ := read["contents"].([]any)[0].(map[string]any)["text"].(string)
	want, _ := os.ReadFile(repoPath("testdata", "example", "word-stats", "references", "sample.txt"))
	if text != string(want) {
		t.Errorf("resources/read: %q", text)
	}
	if data, err := os.ReadFile(auditLog); err != nil || bytes.Count(data, []byte("\n")) != 1 {
		t.Errorf("audit log: %v\n%s", err, data)
	}
}

// skillsChecked is what scripts/mcpclient/skills.mjs reports: every skill
// file read through the Skills extension with its own digest, and what the
// v2 SDK's SkillsClient verified.
type skillsChecked struct {
	Files []struct {
		URI, Digest string
		Size        int
		Match       bool
	} `json:"files"`
	SDKSkills *struct {
		Supported  bool   `json:"supported"`
		TTLMs      int    `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
		Skills     []struct {
			Verified []struct {
				URI      string `json:"uri"`
				Verified bool   `json:"verified"`
			} `json:"verified"`
		} `json:"skills"`
	} `json:"sdkSkills"`
}

// exampleManifest is skill-sandbox digest --manifest of the example skill.
func exampleManifest(t *testing.T) string {
	t.Helper()
	m, err := exec.Command(cliBinary, "digest", "--manifest", repoPath("testdata", "example", "word-stats")).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(m)
}

// check checks that the client read every file of the example skill, each
// matching its entry and the canonical manifest, and, in 2026-07-28, that
// the SDK's SkillsClient verified them all.
func (c skillsChecked) check(t *testing.T, manifest, era string) {
	t.Helper()
	if len(c.Files) != strings.Count(manifest, "\n")-1 {
		t.Errorf("%d files read, the manifest has\n%s", len(c.Files), manifest)
	}
	for _, f := range c.Files {
		rel := strings.TrimPrefix(f.URI, "skill://word-stats/")
		if !f.Match || !strings.Contains(manifest, " "+strings.TrimPrefix(f.Digest, "sha256:")+" "+rel+"\n") {
			t.Errorf("%s: %s (%d bytes) does not match the entry or the manifest:\n%s", f.URI, f.Digest, f.Size, manifest)
		}
	}
	if era != "2026-07-28" {
		return
	}
	s := c.SDKSkills
	if s == nil || !s.Supported || s.TTLMs != 60000 || s.CacheScope != "private" || len(s.Skills) != 1 || len(s.Skills[0].Verified) != len(c.Files) {
		t.Fatalf("SkillsClient: %+v", s)
	}
	for _, v := range s.Skills[0].Verified {
		if !v.Verified {
			t.Errorf("SkillsClient did not verify %s", v.URI)
		}
	}
}
