//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeMCPNodeClient drives the /mcp endpoint of skill-sandbox serve
// with the real clients over Streamable HTTP (scripts/mcpclient/http.mjs),
// with the tenant's bearer token: tools listed and run, every skill file
// read through the Skills extension and checked against its digest.
func TestServeMCPNodeClient(t *testing.T) {
	node, clientDir := nodeClient(t)
	skills, err := filepath.Abs(repoPath("testdata", "example"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := exampleManifest(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	p := startServe(t, "--tokens", writeTokens(t, skills), "--audit-log", log)
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			// Without the token: refused before MCP sees the request.
			cmd := exec.Command(node, filepath.Join(clientDir, "http.mjs"), era, p.url+"/mcp")
			if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "401") {
				t.Errorf("without a token: %v\n%s", err, out)
			}
			cmd = exec.Command(node, filepath.Join(clientDir, "http.mjs"), era, p.url+"/mcp", serveToken)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("client: %v\nstderr:\n%s\nserver:\n%s", err, stderr.String(), p.stderr.String())
			}
			var out struct {
				Tools []string       `json:"tools"`
				Call  map[string]any `json:"call"`
				skillsChecked
			}
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("client output: %v\n%s", err, stdout.String())
			}
			if len(out.Tools) != 5 {
				t.Errorf("tools %v", out.Tools)
			}
			checkRunResult(t, out.Call, era)
			out.check(t, manifest, era)
		})
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte(`"event":"skill.run"`)); n != 2 {
		t.Errorf("%d run records, want 2:\n%s", n, data)
	}
}
